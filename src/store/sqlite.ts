import { mkdirSync } from "node:fs"
import { join } from "node:path"
import KeyvSqlite from "@keyv/sqlite"
import type { Backend, IndexQuery, WriteOp } from "./backend.ts"

/** SQLite's bound-parameter limit is far higher; this keeps one statement's latency small. */
const MAX_PARAMS_PER_STATEMENT = 999
/** The key prefix of the keyv layout before schema versions (see legacyPage). */
const LEGACY_NAMESPACE = "steward:"


/**
 * The Store's backend on `DATA_DIR/steward.sqlite` — the only place with SQL. Two tables:
 * `records` (collection, id → JSON) and `entries` (the index entries: collection, index name,
 * group, at, id). The connection comes from @keyv/sqlite (node-sqlite3); the keyv table it
 * creates holds only data of the layout before schema versions, which migration 1 moves.
 *
 * node-sqlite3 runs statements of one connection in no guaranteed order unless the database is
 * put in serialized mode, which @keyv/sqlite does not expose. Every operation therefore goes
 * through one promise chain here, so a write is on disk before anything queued after it runs.
 * Writes that arrive while a statement is in flight are grouped into the next transaction
 * (group commit), which is atomic: records written together land together or not at all.
 */
export class SqliteBackend implements Backend {
  private chain: Promise<unknown> = Promise.resolve()
  private batch: { ops: Map<string, WriteOp>; done: Promise<void> } | undefined

  private constructor(private readonly adapter: KeyvSqlite) {}

  static async open(dataDir: string): Promise<SqliteBackend> {
    mkdirSync(dataDir, { recursive: true })
    const adapter = new KeyvSqlite({ uri: `sqlite://${join(dataDir, "steward.sqlite")}`, busyTimeout: 5000 })
    // WAL lets readers (the CLI, backups) run beside the writer; NORMAL sync keeps every
    // committed write across a process crash (power loss may lose the last commits).
    await adapter.query("PRAGMA journal_mode=WAL")
    await adapter.query("PRAGMA synchronous=NORMAL")
    await adapter.query("CREATE TABLE IF NOT EXISTS records (collection TEXT NOT NULL, id TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (collection, id)) WITHOUT ROWID")
    await adapter.query(
      "CREATE TABLE IF NOT EXISTS entries (collection TEXT NOT NULL, name TEXT NOT NULL, grp TEXT NOT NULL, at INTEGER NOT NULL, id TEXT NOT NULL, PRIMARY KEY (collection, name, grp, at, id)) WITHOUT ROWID",
    )
    await adapter.query("CREATE INDEX IF NOT EXISTS entries_of_record ON entries (collection, id)")
    return new SqliteBackend(adapter)
  }

  write(ops: WriteOp[]): Promise<void> {
    if (!this.batch) {
      const pending = new Map<string, WriteOp>()
      const done = this.enqueue(() => this.flush(pending))
      this.batch = { ops: pending, done }
    }
    for (const op of ops) {
      const key = `${op.collection}\u0000${op.id}`
      // Re-inserting moves the record to the end so the batch keeps the latest call order.
      this.batch.ops.delete(key)
      this.batch.ops.set(key, op)
    }
    return this.batch.done
  }

  get(collection: string, id: string): Promise<unknown | undefined> {
    return this.enqueue(async () => {
      const rows: Array<{ value: string }> = await this.adapter.query("SELECT value FROM records WHERE collection = ? AND id = ?", collection, id)
      return rows[0] === undefined ? undefined : JSON.parse(rows[0].value)
    })
  }

  list(collection: string, query: IndexQuery): Promise<unknown[]> {
    const order = query.desc ? "DESC" : "ASC"
    const limit = query.limit === undefined ? -1 : Math.max(0, Math.floor(query.limit))
    const offset = Math.max(0, Math.floor(query.offset ?? 0))
    return this.enqueue(async () => {
      const rows: Array<{ value: string }> = await this.adapter.query(
        `SELECT r.value FROM entries e JOIN records r ON r.collection = e.collection AND r.id = e.id
         WHERE e.collection = ? AND e.name = ? AND e.grp = ? AND e.at >= ? AND e.at <= ?
         ORDER BY e.at ${order}, e.id ${order} LIMIT ? OFFSET ?`,
        collection,
        query.index,
        query.group,
        query.from ?? Number.MIN_SAFE_INTEGER,
        query.to ?? Number.MAX_SAFE_INTEGER,
        limit,
        offset,
      )
      return rows.map((row) => JSON.parse(row.value))
    })
  }

  page(collection: string, options: { after?: string; limit: number }): Promise<Array<{ id: string; value: unknown }>> {
    return this.enqueue(async () => {
      const rows: Array<{ id: string; value: string }> = await this.adapter.query(
        "SELECT id, value FROM records WHERE collection = ? AND id > ? ORDER BY id LIMIT ?",
        collection,
        options.after ?? "",
        Math.max(0, Math.floor(options.limit)),
      )
      return rows.map((row) => ({ id: row.id, value: JSON.parse(row.value) }))
    })
  }

  /** Rows of the keyv layout before schema versions (`steward:<prefix>/<rest>` → `{ value }`),
   *  a page at a time by rowid; for migration 1 only. */
  legacyPage(afterRowid: number, limit: number): Promise<Array<{ rowid: number; key: string; value: unknown }>> {
    return this.enqueue(async () => {
      const rows: Array<{ rowid: number; key: string; value: string }> = await this.adapter.query(
        "SELECT rowid, key, value FROM keyv WHERE rowid > ? AND key LIKE ? ORDER BY rowid LIMIT ?",
        afterRowid,
        `${LEGACY_NAMESPACE}%`,
        limit,
      )
      return rows.map((row) => ({ rowid: row.rowid, key: row.key.slice(LEGACY_NAMESPACE.length), value: (JSON.parse(row.value) as { value: unknown }).value }))
    })
  }

  /** Empties the keyv table once migration 1 has moved its rows (@keyv/sqlite recreates it). */
  clearLegacy(): Promise<void> {
    return this.enqueue(async () => {
      await this.adapter.query("DELETE FROM keyv WHERE key LIKE ?", `${LEGACY_NAMESPACE}%`)
    })
  }

  async close(): Promise<void> {
    await this.enqueue(() => this.adapter.disconnect())
  }

  private enqueue<T>(op: () => Promise<T>): Promise<T> {
    const next = this.chain.then(op)
    this.chain = next.catch(() => {})
    return next
  }

  private async flush(pending: Map<string, WriteOp>): Promise<void> {
    if (this.batch?.ops === pending) this.batch = undefined
    const ops = [...pending.values()]
    const puts = ops.filter((op): op is Extract<WriteOp, { value: unknown }> => !("delete" in op))
    const deletes = ops.filter((op) => "delete" in op)
    const statements: Array<[string, unknown[]]> = []
    const chunked = <T>(items: T[], width: number, sql: (part: T[]) => string, params: (item: T) => unknown[]) => {
      const size = Math.floor(MAX_PARAMS_PER_STATEMENT / width)
      for (let i = 0; i < items.length; i += size) {
        const part = items.slice(i, i + size)
        statements.push([sql(part), part.flatMap(params)])
      }
    }
    const rows = (count: number, width: number) => Array.from({ length: count }, () => `(${Array(width).fill("?").join(", ")})`).join(", ")
    chunked(puts, 3, (part) => `INSERT INTO records (collection, id, value) VALUES ${rows(part.length, 3)} ON CONFLICT (collection, id) DO UPDATE SET value = excluded.value`, (op) => [
      op.collection,
      op.id,
      JSON.stringify(op.value),
    ])
    // A record's entries are replaced whole: whatever it is no longer indexed under goes.
    chunked(ops, 2, (part) => `DELETE FROM entries WHERE (collection, id) IN (VALUES ${rows(part.length, 2)})`, (op) => [op.collection, op.id])
    const entries = puts.flatMap((op) => Object.entries(op.indexes).flatMap(([name, entry]) => (entry ? [[op.collection, name, entry.group, entry.at, op.id]] : [])))
    chunked(entries, 5, (part) => `INSERT INTO entries (collection, name, grp, at, id) VALUES ${rows(part.length, 5)}`, (entry) => entry)
    chunked(deletes, 2, (part) => `DELETE FROM records WHERE (collection, id) IN (VALUES ${rows(part.length, 2)})`, (op) => [op.collection, op.id])
    const grouped = statements.length > 1
    if (grouped) await this.adapter.query("BEGIN IMMEDIATE")
    try {
      for (const [sql, params] of statements) await this.adapter.query(sql, ...params)
      if (grouped) await this.adapter.query("COMMIT")
    } catch (error) {
      if (grouped) await this.adapter.query("ROLLBACK").catch(() => {})
      throw error
    }
  }
}
