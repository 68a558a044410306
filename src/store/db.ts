import { mkdirSync } from "node:fs"
import { join } from "node:path"
import Keyv from "keyv"
import KeyvSqlite from "@keyv/sqlite"

const NAMESPACE = "steward"
/** SQLite's bound-parameter limit is far higher; this keeps one statement's latency small. */
const MAX_ROWS_PER_STATEMENT = 400

type Row = { key: string; value: string }

/**
 * The one connection to `DATA_DIR/steward.sqlite`, through keyv + @keyv/sqlite.
 *
 * node-sqlite3 runs statements of one connection in no guaranteed order unless the database
 * is put in serialized mode, which @keyv/sqlite does not expose. Every operation therefore
 * goes through one promise chain here, so a write is on disk before anything queued after
 * it runs. Writes that arrive while a statement is in flight are grouped into the next
 * statement (group commit): one multi-row upsert is atomic, so records written together —
 * a Planner's result and the worker tasks it commits — land together or not at all.
 */
export class Db {
  private chain: Promise<unknown> = Promise.resolve()
  private batch: { rows: Map<string, string | null>; done: Promise<void> } | undefined

  private constructor(
    private readonly adapter: KeyvSqlite,
    readonly keyv: Keyv,
  ) {}

  static async open(dataDir: string): Promise<Db> {
    mkdirSync(dataDir, { recursive: true })
    const adapter = new KeyvSqlite({ uri: `sqlite://${join(dataDir, "steward.sqlite")}`, busyTimeout: 5000 })
    const keyv = new Keyv({ store: adapter, namespace: NAMESPACE })
    keyv.on("error", () => {}) // errors surface through the awaited calls; the emitter must not throw
    // WAL lets readers (the CLI, backups) run beside the writer; NORMAL sync keeps every
    // committed write across a process crash (power loss may lose the last commits).
    await adapter.query("PRAGMA journal_mode=WAL")
    await adapter.query("PRAGMA synchronous=NORMAL")
    return new Db(adapter, keyv)
  }

  /** Upserts (value) or deletes (null) the given keys, atomically and in call order. */
  write(entries: Iterable<[string, unknown | null]>): Promise<void> {
    if (!this.batch) {
      const rows = new Map<string, string | null>()
      const done = this.enqueue(() => this.flush(rows))
      this.batch = { rows, done }
    }
    for (const [key, value] of entries) {
      const full = `${NAMESPACE}:${key}`
      // Re-inserting moves the key to the end so the batch keeps the latest call order.
      this.batch.rows.delete(full)
      this.batch.rows.set(full, value === null ? null : JSON.stringify({ value }))
    }
    return this.batch.done
  }

  async get<T>(key: string): Promise<T | undefined> {
    return this.enqueue(() => this.keyv.get<T>(key))
  }

  /** Records whose key starts with `prefix`, in key order (optionally newest first, paged). */
  scan<T>(prefix: string, opts: { from?: string; to?: string; desc?: boolean; limit?: number; offset?: number } = {}): Promise<T[]> {
    const lo = `${NAMESPACE}:${prefix}${opts.from ?? ""}`
    const hi = `${NAMESPACE}:${prefix}${opts.to ?? "\uffff"}`
    const order = opts.desc ? "DESC" : "ASC"
    const page = opts.limit !== undefined ? ` LIMIT ${opts.limit | 0} OFFSET ${(opts.offset ?? 0) | 0}` : ""
    return this.enqueue(async () => {
      const rows: Row[] = await this.adapter.query(
        `SELECT key, value FROM keyv WHERE key >= ? AND key <= ? ORDER BY key ${order}${page}`,
        lo,
        hi,
      )
      return rows.map((row) => (JSON.parse(row.value) as { value: T }).value)
    })
  }

  /** Waits for everything queued so far, then closes the connection. */
  async close(): Promise<void> {
    await this.enqueue(() => this.adapter.disconnect())
  }

  private enqueue<T>(op: () => Promise<T>): Promise<T> {
    const next = this.chain.then(op)
    this.chain = next.catch(() => {})
    return next
  }

  private async flush(rows: Map<string, string | null>): Promise<void> {
    if (this.batch?.rows === rows) this.batch = undefined
    const statements: Array<[string, string[]]> = []
    const upserts = [...rows].filter((row): row is [string, string] => row[1] !== null)
    for (let i = 0; i < upserts.length; i += MAX_ROWS_PER_STATEMENT) {
      const part = upserts.slice(i, i + MAX_ROWS_PER_STATEMENT)
      statements.push([
        `INSERT INTO keyv (key, value) VALUES ${part.map(() => "(?, ?)").join(", ")} ON CONFLICT(key) DO UPDATE SET value = excluded.value`,
        part.flat(),
      ])
    }
    const deletes = [...rows].filter(([, value]) => value === null).map(([key]) => key)
    if (deletes.length > 0) statements.push([`DELETE FROM keyv WHERE key IN (${deletes.map(() => "?").join(", ")})`, deletes])
    // One statement is atomic by itself; only a larger group needs a transaction.
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
