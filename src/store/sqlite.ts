import { mkdirSync } from "node:fs"
import { join } from "node:path"
import KeyvSqlite from "@keyv/sqlite"
import { type Backend, type CollectionSchema, type IndexQuery, type WriteOp } from "./backend.ts"
import { COLUMNS, gather, IndexSlots, ROW_WIDTH, SLOTS, statementCache, statementsOf, UPDATES } from "./rows.ts"

/** SQLite's bound-parameter limit is far higher; this keeps one statement's latency small. */
const MAX_PARAMS_PER_STATEMENT = 999
/** The key prefix of the keyv layout before schema versions (see legacyPage). */
const LEGACY_NAMESPACE = "steward:"
const placeholders = (count: number, width: number) => Array.from({ length: count }, () => `(${Array(width).fill("?").join(", ")})`).join(", ")
const upsertSql = statementCache((rows) => `INSERT INTO records (${COLUMNS.join(", ")}) VALUES ${placeholders(rows, ROW_WIDTH)} ON CONFLICT (collection, id) DO UPDATE SET ${UPDATES}`)
const deleteSql = statementCache((rows) => `DELETE FROM records WHERE (collection, id) IN (VALUES ${placeholders(rows, 2)})`)

/**
 * The Store's backend on `DATA_DIR/steward.sqlite` — the only place with SQL. One table,
 * `records`: (collection, id) → JSON, with a record's index entries beside it in columns
 * (`g1`/`a1` … a group and an at per index slot; a collection's indexes take the slots in the
 * order its schema names them), each slot a partial SQLite index on (collection, g, a, id). So a
 * write is one upsert, with its index entries in the same row. The connection comes from
 * @keyv/sqlite (node-sqlite3); the keyv table it creates holds only data of the layout before
 * schema versions, which migration 1 moves.
 *
 * node-sqlite3 runs statements of one connection in no guaranteed order unless the database is
 * put in serialized mode, which @keyv/sqlite does not expose. Every operation therefore goes
 * through one promise chain here, so a write is on disk before anything queued after it runs.
 * Writes that arrive while a statement is in flight are grouped into the next statement (group
 * commit), which is atomic: records written together land together or not at all.
 */
export class SqliteBackend implements Backend {
  private chain: Promise<unknown> = Promise.resolve()
  private batch: { ops: Map<string, WriteOp>; done: Promise<void> } | undefined

  private constructor(
    private readonly adapter: KeyvSqlite,
    /** Per collection, the slot (1…MAX_INDEXES) of each index name. */
    private readonly slots: IndexSlots,
  ) {}

  /** Opens `dataDir/file`; another file than steward.sqlite is a backup being written. */
  static async open(dataDir: string, schema: readonly CollectionSchema[], file = "steward.sqlite"): Promise<SqliteBackend> {
    mkdirSync(dataDir, { recursive: true })
    const adapter = new KeyvSqlite({ uri: `sqlite://${join(dataDir, file)}`, busyTimeout: 5000 })
    // WAL lets readers (the CLI, backups) run beside the writer; NORMAL sync keeps every
    // committed write across a process crash (power loss may lose the last commits).
    await adapter.query("PRAGMA journal_mode=WAL")
    await adapter.query("PRAGMA synchronous=NORMAL")
    const columns = SLOTS.map((n) => `g${n} TEXT, a${n} INTEGER`).join(", ")
    await adapter.query(`CREATE TABLE IF NOT EXISTS records (collection TEXT NOT NULL, id TEXT NOT NULL, value TEXT NOT NULL, ${columns}, PRIMARY KEY (collection, id))`)
    for (const n of SLOTS) await adapter.query(`CREATE INDEX IF NOT EXISTS records_index${n} ON records (collection, g${n}, a${n}, id) WHERE g${n} IS NOT NULL`)
    return new SqliteBackend(adapter, new IndexSlots(schema))
  }

  write(ops: WriteOp[]): Promise<void> {
    if (!this.batch) {
      const pending = new Map<string, WriteOp>()
      const done = this.enqueue(() => this.flush(pending))
      this.batch = { ops: pending, done }
    }
    gather(this.batch.ops, ops)
    return this.batch.done
  }

  get(collection: string, id: string): Promise<unknown | undefined> {
    return this.enqueue(async () => {
      const rows: Array<{ value: string }> = await this.adapter.query("SELECT value FROM records WHERE collection = ? AND id = ?", collection, id)
      return rows[0] === undefined ? undefined : JSON.parse(rows[0].value)
    })
  }

  list(collection: string, query: IndexQuery): Promise<unknown[]> {
    const n = this.slots.of(collection, query.index)
    const order = query.desc ? "DESC" : "ASC"
    const limit = query.limit === undefined ? -1 : Math.max(0, Math.floor(query.limit))
    const offset = Math.max(0, Math.floor(query.offset ?? 0))
    return this.enqueue(async () => {
      const rows: Array<{ value: string }> = await this.adapter.query(
        `SELECT value FROM records WHERE collection = ? AND g${n} = ? AND a${n} >= ? AND a${n} <= ? ORDER BY a${n} ${order}, id ${order} LIMIT ? OFFSET ?`,
        collection,
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

  backup(file: string): Promise<void> {
    // VACUUM INTO reads one snapshot of the database (a read transaction), so writers in this or
    // another process go on and the copy is consistent; it refuses a file that exists.
    return this.enqueue(async () => {
      await this.adapter.query("VACUUM INTO ?", file)
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
    const statements = statementsOf(pending.values(), { slotOf: (collection, index) => this.slots.of(collection, index), upsertSql, deleteSql, maxParams: MAX_PARAMS_PER_STATEMENT })
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
