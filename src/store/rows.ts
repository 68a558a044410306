import { MAX_INDEXES, type CollectionSchema, type WriteOp } from "./backend.ts"

/**
 * The `records` table both SQL backends keep (sqlite.ts, postgres.ts): (collection, id) → the
 * record's JSON, its index entries in slot columns beside it — a group and an at per slot.
 * What differs between them (placeholders, how text is encoded) is passed in.
 */

export const SLOTS = Array.from({ length: MAX_INDEXES }, (_, i) => i + 1)
/** collection, id, value, then a group and an at per index slot. */
export const ROW_WIDTH = 3 + 2 * MAX_INDEXES
export const COLUMNS = ["collection", "id", "value", ...SLOTS.flatMap((n) => [`g${n}`, `a${n}`])]
/** The upsert's SET list: every column but the key. */
export const UPDATES = COLUMNS.slice(2).map((column) => `${column} = excluded.${column}`).join(", ")

/** Per collection, the slot (1…MAX_INDEXES) each of its indexes takes: in the order its schema
 *  names them. */
export class IndexSlots {
  private readonly slots = new Map<string, Map<string, number>>()

  constructor(readonly schema: readonly CollectionSchema[]) {
    for (const collection of schema) {
      if (collection.indexes.length > MAX_INDEXES) throw new Error(`collection ${collection.name}: at most ${MAX_INDEXES} indexes`)
      this.slots.set(collection.name, new Map(collection.indexes.map((name, i) => [name, i + 1])))
    }
  }

  of(collection: string, index: string): number {
    const n = this.slots.get(collection)?.get(index)
    if (n === undefined) throw new Error(`collection ${collection} has no index ${index}`)
    return n
  }

  /** A collection's index names in slot order (none for a collection not in the schema). */
  indexesOf(collection: string): string[] {
    return [...(this.slots.get(collection)?.keys() ?? [])]
  }
}

/** A statement text per row count, built once, not at every write. */
export function statementCache(build: (rows: number) => string): (rows: number) => string {
  const built = new Map<number, string>()
  return (rows) => {
    let sql = built.get(rows)
    if (!sql) built.set(rows, (sql = build(rows)))
    return sql
  }
}

export interface RowDialect {
  /** Per collection and index name, its slot (1…MAX_INDEXES). */
  slotOf(collection: string, index: string): number
  upsertSql(rows: number): string
  deleteSql(rows: number): string
  maxParams: number
  /** How an id or group is stored (Postgres text cannot hold NUL). */
  text?: (value: string) => string
  /** How an index entry's `at` is stored. */
  at?: (at: number) => number | null
}

/** Adds writes to a batch being gathered (group commit): a later write to a record replaces an
 *  earlier one and moves to the end, so the batch keeps the latest call order. */
export function gather(batch: Map<string, WriteOp>, ops: WriteOp[]): void {
  for (const op of ops) {
    const key = `${op.collection}\u0000${op.id}`
    batch.delete(key)
    batch.set(key, op)
  }
}

/** A batch of writes as statements: upserts of the records put, deletes of the ones removed,
 *  each at most `maxParams` parameters. */
export function statementsOf(ops: Iterable<WriteOp>, dialect: RowDialect): Array<[string, unknown[]]> {
  const text = dialect.text ?? ((value: string) => value)
  const at = dialect.at ?? ((value: number) => value)
  const puts: unknown[][] = []
  const deletes: string[][] = []
  for (const op of ops) {
    if ("delete" in op) {
      deletes.push([op.collection, text(op.id)])
      continue
    }
    const row: unknown[] = [op.collection, text(op.id), JSON.stringify(op.value), ...Array(2 * MAX_INDEXES).fill(null)]
    for (const [name, entry] of Object.entries(op.indexes)) {
      if (!entry) continue
      const n = dialect.slotOf(op.collection, name)
      row[1 + 2 * n] = text(entry.group)
      row[2 + 2 * n] = at(entry.at)
    }
    puts.push(row)
  }
  const statements: Array<[string, unknown[]]> = []
  const perPut = Math.floor(dialect.maxParams / ROW_WIDTH)
  for (let i = 0; i < puts.length; i += perPut) {
    const part = puts.slice(i, i + perPut)
    statements.push([dialect.upsertSql(part.length), part.flat()])
  }
  const perDelete = Math.floor(dialect.maxParams / 2)
  for (let i = 0; i < deletes.length; i += perDelete) {
    const part = deletes.slice(i, i + perDelete)
    statements.push([dialect.deleteSql(part.length), part.flat()])
  }
  return statements
}
