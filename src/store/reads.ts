import type { Backend, IndexQuery } from "./backend.ts"
import type { Collection } from "./collections.ts"

/** How many records one read of a listing or a prune takes at most. */
export const PAGE = 1000

/** The typed reads the Store and each kind of its records make through the one Backend. */
export abstract class BackendReads {
  constructor(protected readonly backend: Backend) {}

  protected async get<T>(collection: Collection<T>, id: string): Promise<T | undefined> {
    return (await this.backend.get(collection.name, id)) as T | undefined
  }

  protected async index<T>(collection: Collection<T>, query: IndexQuery): Promise<T[]> {
    return (await this.backend.list(collection.name, query)) as T[]
  }

  /** The first record an index holds under `group` (an origin, a firing): the one, where one at most is kept. */
  protected async first<T>(collection: Collection<T>, index: string, group: string): Promise<T | undefined> {
    return (await this.index(collection, { index, group, limit: 1 }))[0]
  }

  /** Every record of the collection, in id order, read a page at a time. */
  protected async readAll<T>(collection: Collection<T>): Promise<T[]> {
    const records: T[] = []
    for (let after: string | undefined; ; ) {
      const rows = await this.backend.page(collection.name, { after, limit: PAGE })
      records.push(...rows.map((row) => row.value as T))
      if (rows.length < PAGE) return records
      after = rows.at(-1)!.id
    }
  }
}
