import type { Backend, WriteOp } from "./backend.ts"
import * as c from "./collections.ts"
import { put, type Collection, type RaisedName } from "./collections.ts"

/**
 * The store's schema version and the migrations that bring older data up to it. Start-up runs
 * every migration newer than the data's version, in order, recording each version as it lands;
 * data from a newer Steward is refused (NewerDataError) rather than misread.
 */
export interface Migration {
  version: number
  description: string
  up(backend: Backend): Promise<void>
}

export class NewerDataError extends Error {
  override name = "NewerDataError"
  constructor(found: number, known: number) {
    super(`the data folder was written by a newer Steward (schema version ${found}; this one knows up to ${known}). Run that version, or restore a backup made for this one.`)
  }
}

/** Where a legacy layout can be read from: only the SQLite backend ever had one. */
interface LegacyRows {
  legacyPage(afterRowid: number, limit: number): Promise<Array<{ rowid: number; key: string; value: unknown }>>
  clearLegacy(): Promise<void>
}

const LEGACY_PAGE = 500

/** Migration 1: from the keyv layout (`<prefix>/<id>` keys, prefix scans in key order) to
 *  collections with explicit indexes. Idempotent: an interrupted run is simply run again. */
const collectionsFromKeyv: Migration = {
  version: 1,
  description: "keyv key prefixes → collections with indexes",
  async up(backend) {
    if (!("legacyPage" in backend)) return
    const legacy = backend as Backend & LegacyRows
    const latest = new Map<string, RaisedName>()
    for (let after = 0; ; ) {
      const rows = await legacy.legacyPage(after, LEGACY_PAGE)
      if (rows.length === 0) break
      const ops: WriteOp[] = []
      for (const { key, value } of rows) {
        const op = legacyOp(key, value)
        if (op) ops.push(op)
        if (key.startsWith("raised/")) {
          const record = value as { id: string; name: string; at: string }
          const known = latest.get(record.name)
          if (!known || Date.parse(known.at) <= Date.parse(record.at)) latest.set(record.name, { name: record.name, at: record.at, id: record.id })
        }
      }
      await backend.write(ops)
      after = rows.at(-1)!.rowid
    }
    await backend.write([...latest.values()].map((record) => put(c.raisedNames, record)))
    await legacy.clearLegacy()
  },
}

export const MIGRATIONS: readonly Migration[] = [collectionsFromKeyv]
export const SCHEMA_VERSION = MIGRATIONS.at(-1)!.version

export async function migrate(backend: Backend, migrations: readonly Migration[] = MIGRATIONS): Promise<void> {
  const known = migrations.at(-1)?.version ?? 0
  const found = ((await backend.get(c.meta.name, "schema")) as { version: number } | undefined)?.version ?? 0
  if (found > known) throw new NewerDataError(found, known)
  for (const migration of migrations) {
    if (migration.version <= found) continue
    await migration.up(backend)
    await backend.write([put(c.meta, { id: "schema", version: migration.version })])
  }
}

/** The new place of one legacy record; undefined for a key no collection takes. */
function legacyOp(key: string, value: unknown): WriteOp | undefined {
  const prefix = key.slice(0, key.indexOf("/"))
  const rest = key.slice(prefix.length + 1)
  const as = <T>(collection: Collection<T>, record: unknown) => put(collection, record as T)
  switch (prefix) {
    case "task": return as(c.tasks, value)
    case "session": return as(c.sessions, value)
    case "msg": return as(c.messages, value)
    case "event": return as(c.events, value)
    case "conv": return as(c.conversations, value)
    case "outbox": return as(c.outbox, value)
    case "hist": return as(c.history, value)
    case "question": return as(c.questions, value)
    case "seen": return as(c.seen, { id: rest, at: new Date((value as { at: number }).at).toISOString() })
    case "pairing": return as(c.pairings, value)
    case "allow": return as(c.allowed, value)
    case "chan": {
      const slash = rest.indexOf("/")
      const entry = value as { key: string; value: unknown }
      return as(c.channelEntries, { channel: decodeURIComponent(rest.slice(0, slash)), key: entry.key, value: entry.value })
    }
    case "trigger": return as(c.triggers, value)
    case "firing": return as(c.firings, value)
    case "raised": return as(c.raised, value)
    default: return undefined
  }
}
