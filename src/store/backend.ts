/**
 * What a storage backend must do for the Store: keep records of named collections by id, keep
 * each record's index entries with it, and list a collection through one of its indexes. A new
 * backend (Postgres, say) is one file implementing this, checked by `test/store/contract.ts`.
 *
 * Ordering is never left to how a backend sorts keys: an index entry names a `group` (matched
 * exactly) and a number `at` (a time in ms, or 0); a listing is ordered by `at`, then by record
 * id. Ids compare bytewise (SQLite's BINARY collation, Postgres's COLLATE "C").
 */

/** A collection and the names of its indexes (at most MAX_INDEXES), given to a backend when it
 *  opens so it can lay out storage for them. */
export interface CollectionSchema {
  name: string
  indexes: readonly string[]
}

export const MAX_INDEXES = 3

/** A record's place in one index of its collection. */
export interface IndexEntry {
  group: string
  at: number
}

/** Writes a record (replacing it and all its index entries — an index not named, or undefined,
 *  does not list it), or deletes one (and its entries). */
export type WriteOp =
  | { collection: string; id: string; value: unknown; indexes: Record<string, IndexEntry | undefined> }
  | { collection: string; id: string; delete: true }

export interface IndexQuery {
  index: string
  group: string
  /** Bounds on `at`, both inclusive. */
  from?: number
  to?: number
  desc?: boolean
  limit?: number
  offset?: number
}

export interface Backend {
  /** Applies the operations atomically — all or none — in call order; a later write to the same
   *  record wins. Writes made while an earlier one is under way may be grouped with each other. */
  write(ops: WriteOp[]): Promise<void>
  get(collection: string, id: string): Promise<unknown | undefined>
  /** Values of a collection's index entries in the query's range, by `at` then id. */
  list(collection: string, query: IndexQuery): Promise<unknown[]>
  /** Every record of a collection by id, a page at a time (`after` the last id of the previous
   *  page): for migrations and whole-collection reads, never for time order. */
  page(collection: string, options: { after?: string; limit: number }): Promise<Array<{ id: string; value: unknown }>>
  /** Waits for everything queued so far, then closes. */
  close(): Promise<void>
}
