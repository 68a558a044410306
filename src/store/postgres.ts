import { rmSync, writeFileSync } from "node:fs"
import { basename, dirname } from "node:path"
import pg from "pg"
import { redactUrl } from "../config/fields.ts"
import { type Backend, type CollectionSchema, type IndexEntry, type IndexQuery, type WriteOp } from "./backend.ts"
import { COLUMNS, gather, IndexSlots, ROW_WIDTH, SLOTS, statementCache, statementsOf, UPDATES } from "./rows.ts"
import { SqliteBackend } from "./sqlite.ts"

/** Postgres allows 65535 bound parameters; this keeps one statement's parse and plan small. */
const MAX_PARAMS_PER_STATEMENT = 9000
/** How long opening a connection may take before it counts as unreachable. */
const CONNECT_TIMEOUT_MS = 10_000
/** Rows a backup reads from the snapshot and writes to the copy at a time. */
const BACKUP_PAGE = 1000
/** The advisory lock key every Steward process takes while it lays out and migrates the schema
 *  (any fixed number; this one is "steward" in ASCII). */
const SCHEMA_LOCK = 0x73746577617264n

function placeholders(count: number, width: number): string {
  const rows: string[] = []
  for (let r = 0; r < count; r++) rows.push(`(${Array.from({ length: width }, (_, c) => `$${r * width + c + 1}`).join(", ")})`)
  return rows.join(", ")
}
const upsertSql = statementCache((rows) => `INSERT INTO records (${COLUMNS.join(", ")}) VALUES ${placeholders(rows, ROW_WIDTH)} ON CONFLICT (collection, id) DO UPDATE SET ${UPDATES}`)
const deleteSql = statementCache((rows) => `DELETE FROM records WHERE (collection, id) IN (${placeholders(rows, 2)})`)

// COLLATE "C" compares ids and groups bytewise, as SQLite's BINARY does, whatever the database's
// locale. `at` is a double: a time in ms is an exact integer in it, as in SQLite's INTEGER/REAL.
const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS records (collection TEXT COLLATE "C" NOT NULL, id TEXT COLLATE "C" NOT NULL, value TEXT NOT NULL, ${SLOTS.map((n) => `g${n} TEXT COLLATE "C", a${n} DOUBLE PRECISION`).join(", ")}, PRIMARY KEY (collection, id))`
const CREATE_INDEXES = SLOTS.map((n) => `CREATE INDEX IF NOT EXISTS records_index${n} ON records (collection, g${n}, a${n}, id) WHERE g${n} IS NOT NULL`)

/** Postgres text cannot hold NUL, which ids may (a channel's state: `<channel>\0<key>`). It is
 *  written as \1\1 and \1 as \1\2: every other character is above both, so bytewise order is
 *  kept. */
const escaped = (text: string): string => text.replace(/[\u0000\u0001]/g, (ch) => (ch === "\u0000" ? "\u0001\u0001" : "\u0001\u0002"))
const unescaped = (text: string): string => text.replace(/\u0001[\u0001\u0002]/g, (pair) => (pair === "\u0001\u0001" ? "\u0000" : "\u0001"))

export interface PostgresOptions {
  /** What the connections call themselves to the server (a cluster tags a process's with its id). */
  applicationName?: string
}

interface Row {
  collection: string
  id: string
  value: string
  [slot: string]: string | number | null
}

/**
 * The Store's backend on a Postgres database (STORE_URL), with the same layout as sqlite.ts: one
 * table `records`, (collection, id) → JSON text, a record's index entries beside it in slot
 * columns, each slot a partial index. JSON is kept as text, not jsonb: jsonb refuses `\u0000`
 * and reorders keys, and nothing here queries inside a value.
 *
 * Writes go one batch at a time, in call order, and writes that arrive while one is in flight
 * are grouped into the next (group commit); a batch is one statement, or one transaction when it
 * needs several. A read waits for the writes called before it, so a caller reads its own writes,
 * then runs on its own pooled connection beside other reads.
 */
export class PostgresBackend implements Backend {
  private writing: Promise<void> = Promise.resolve()
  private batch: { ops: Map<string, WriteOp>; done: Promise<void> } | undefined

  private constructor(
    private readonly pool: pg.Pool,
    /** Per collection, the slot (1…MAX_INDEXES) of each index name. */
    private readonly slots: IndexSlots,
  ) {}

  /** Connects, lays out the table and runs `setUp` (the migrations) under one advisory lock, so
   *  processes starting at once against one database create and migrate the schema once. */
  static async open(url: string, schema: readonly CollectionSchema[], setUp?: (backend: PostgresBackend) => Promise<void>, { applicationName }: PostgresOptions = {}): Promise<PostgresBackend> {
    const slots = new IndexSlots(schema)
    const pool = new pg.Pool({ connectionString: url, max: 10, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, application_name: applicationName })
    // An idle connection the server drops emits "error" on the pool; unhandled, that would end
    // the process. The pool replaces it, and the next query reports a real outage.
    pool.on("error", () => {})
    const backend = new PostgresBackend(pool, slots)
    try {
      const client = await pool.connect().catch((error: unknown) => {
        throw withUrl(error, url)
      })
      try {
        await client.query("SELECT pg_advisory_lock($1)", [SCHEMA_LOCK.toString()])
        try {
          await client.query(CREATE_TABLE)
          for (const sql of CREATE_INDEXES) await client.query(sql)
          await setUp?.(backend)
        } finally {
          await client.query("SELECT pg_advisory_unlock($1)", [SCHEMA_LOCK.toString()])
        }
      } finally {
        client.release()
      }
    } catch (error) {
      await pool.end().catch(() => {})
      throw error
    }
    return backend
  }

  write(ops: WriteOp[]): Promise<void> {
    if (!this.batch) {
      const pending = new Map<string, WriteOp>()
      const done = this.writing.then(() => this.flush(pending))
      this.writing = done.catch(() => {})
      this.batch = { ops: pending, done }
    }
    gather(this.batch.ops, ops)
    return this.batch.done
  }

  async get(collection: string, id: string): Promise<unknown | undefined> {
    await this.writing
    const { rows } = await this.pool.query<{ value: string }>("SELECT value FROM records WHERE collection = $1 AND id = $2", [collection, escaped(id)])
    return rows[0] === undefined ? undefined : JSON.parse(rows[0].value)
  }

  async list(collection: string, query: IndexQuery): Promise<unknown[]> {
    const n = this.slots.of(collection, query.index)
    const order = query.desc ? "DESC" : "ASC"
    const limit = query.limit === undefined ? null : Math.max(0, Math.floor(query.limit))
    const offset = Math.max(0, Math.floor(query.offset ?? 0))
    await this.writing
    const { rows } = await this.pool.query<{ value: string }>(
      `SELECT value FROM records WHERE collection = $1 AND g${n} = $2 AND a${n} >= $3 AND a${n} <= $4 ORDER BY a${n} ${order}, id ${order} LIMIT $5 OFFSET $6`,
      [collection, escaped(query.group), query.from ?? Number.MIN_SAFE_INTEGER, query.to ?? Number.MAX_SAFE_INTEGER, limit, offset],
    )
    return rows.map((row) => JSON.parse(row.value))
  }

  async page(collection: string, options: { after?: string; limit: number }): Promise<Array<{ id: string; value: unknown }>> {
    await this.writing
    const { rows } = await this.pool.query<{ id: string; value: string }>("SELECT id, value FROM records WHERE collection = $1 AND id > $2 ORDER BY id LIMIT $3", [
      collection,
      escaped(options.after ?? ""),
      Math.max(0, Math.floor(options.limit)),
    ])
    return rows.map((row) => ({ id: unescaped(row.id), value: JSON.parse(row.value) }))
  }

  /** Reads one REPEATABLE READ snapshot (writers go on) into a new SQLite store file, so a backup
   *  is the same kind of file for both backends and opens as a DATA_DIR store. */
  async backup(file: string): Promise<void> {
    // Created here, exclusively: an existing file is refused, never overwritten.
    writeFileSync(file, "", { flag: "wx" })
    let client: pg.PoolClient | undefined
    let copy: SqliteBackend | undefined
    try {
      client = await this.pool.connect()
      await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
      copy = await SqliteBackend.open(dirname(file), this.slots.schema, basename(file))
      for (let after = ["", ""]; ; ) {
        const { rows } = await client.query<Row>(`SELECT ${COLUMNS.join(", ")} FROM records WHERE (collection, id) > ($1, $2) ORDER BY collection, id LIMIT $3`, [...after, BACKUP_PAGE])
        if (rows.length === 0) break
        await copy.write(rows.map((row) => this.opOf(row)))
        after = [rows.at(-1)!.collection, rows.at(-1)!.id]
      }
      await client.query("COMMIT")
      await copy.close()
    } catch (error) {
      await client?.query("ROLLBACK").catch(() => {})
      await copy?.close().catch(() => {})
      // A half-written copy must not pass for a backup.
      for (const suffix of ["", "-wal", "-shm"]) rmSync(`${file}${suffix}`, { force: true })
      throw error
    } finally {
      client?.release()
    }
  }

  async close(): Promise<void> {
    await this.writing
    await this.pool.end()
  }



  /** A stored row as the write that would store it again (a backup's copy). */
  private opOf(row: Row): WriteOp {
    const names = this.slots.indexesOf(row.collection)
    const indexes: Record<string, IndexEntry | undefined> = {}
    names.forEach((name, i) => {
      const group = row[`g${i + 1}`]
      if (typeof group === "string") indexes[name] = { group: unescaped(group), at: row[`a${i + 1}`] as number }
    })
    return { collection: row.collection, id: unescaped(row.id), value: JSON.parse(row.value), indexes }
  }

  private async flush(pending: Map<string, WriteOp>): Promise<void> {
    if (this.batch?.ops === pending) this.batch = undefined
    const statements = statementsOf(pending.values(), {
      slotOf: (collection, index) => this.slots.of(collection, index),
      upsertSql,
      deleteSql,
      maxParams: MAX_PARAMS_PER_STATEMENT,
      text: escaped,
      // SQLite stores NaN (Date.parse of a bad date) as NULL, which no range matches; so here.
      at: (at) => (Number.isFinite(at) ? at : null),
    })
    if (statements.length === 0) return
    // One statement is atomic by itself and one round trip; only a larger group needs a transaction.
    if (statements.length === 1) {
      await this.pool.query(statements[0]![0], statements[0]![1])
      return
    }
    const client = await this.pool.connect()
    try {
      await client.query("BEGIN")
      for (const [sql, params] of statements) await client.query(sql, params)
      await client.query("COMMIT")
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {})
      throw error
    } finally {
      client.release()
    }
  }
}

/** Connects once and asks the server's version (`steward doctor`); changes nothing. Throws the
 *  connection's error, naming the database without its password. */
export async function postgresVersion(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS })
  try {
    await client.connect()
    const { rows } = await client.query<{ version: string }>("SELECT current_setting('server_version') AS version")
    return rows[0]!.version
  } catch (error) {
    throw withUrl(error, url)
  } finally {
    await client.end().catch(() => {})
  }
}

/** A connection or set-up failure, naming the database without its password. */
function withUrl(error: unknown, url: string): Error {
  // A refused connection to a name with several addresses is an AggregateError without a message.
  const message = (error instanceof Error && error.message) || (error as { code?: string }).code || String(error)
  return new Error(`Postgres store at ${redactUrl(url)}: ${message}`, { cause: error })
}
