import { afterEach, beforeEach, describe, expect, it } from "vitest"
import type { Backend, CollectionSchema } from "../../src/store/backend.ts"

/**
 * What every storage backend must do (src/store/backend.ts). A backend's test file calls
 * `backendContract(name, open)`; `open(schema)` returns a fresh, empty backend, `reopen()` the
 * same data through a new connection.
 */
export interface BackendFactory {
  open(schema: readonly CollectionSchema[]): Promise<Backend>
  reopen(schema: readonly CollectionSchema[]): Promise<Backend>
  dispose(): Promise<void>
}

const SCHEMA: CollectionSchema[] = [
  { name: "notes", indexes: ["byOwner", "open", "origin"] },
  { name: "other", indexes: ["byOwner"] },
]

interface Note {
  id: string
  owner: string
  at: number
  open?: boolean
  origin?: string
}

const note = (n: Note) => ({
  collection: "notes",
  id: n.id,
  value: n,
  indexes: { byOwner: { group: n.owner, at: n.at }, open: n.open ? { group: "", at: n.at } : undefined, origin: n.origin ? { group: n.origin, at: 0 } : undefined },
})
const ids = (values: unknown[]) => values.map((value) => (value as Note).id)

export function backendContract(name: string, factory: () => BackendFactory): void {
  describe(`storage backend contract: ${name}`, () => {
    let made: BackendFactory
    let backend: Backend

    beforeEach(async () => {
      made = factory()
      backend = await made.open(SCHEMA)
    })
    afterEach(async () => {
      await backend.close()
      await made.dispose()
    })

    it("gets what was put, replaces it on a second put, and forgets it once deleted", async () => {
      await backend.write([note({ id: "a", owner: "x", at: 1 })])
      expect(await backend.get("notes", "a")).toEqual({ id: "a", owner: "x", at: 1 })
      await backend.write([note({ id: "a", owner: "y", at: 2 })])
      expect(await backend.get("notes", "a")).toEqual({ id: "a", owner: "y", at: 2 })
      expect(await backend.get("other", "a")).toBeUndefined()
      await backend.write([{ collection: "notes", id: "a", delete: true }])
      expect(await backend.get("notes", "a")).toBeUndefined()
      expect(await backend.list("notes", { index: "byOwner", group: "y" })).toEqual([])
    })

    it("lists by index: one group only, ordered by at then id (not by id or insertion), in a range, both ways, paged", async () => {
      await backend.write([
        note({ id: "z", owner: "x", at: 10 }),
        note({ id: "b", owner: "x", at: 30 }),
        note({ id: "c", owner: "x", at: 20 }),
        note({ id: "a", owner: "x", at: 20 }),
        note({ id: "d", owner: "x:longer", at: 15 }),
        note({ id: "e", owner: "X", at: 15 }),
      ])
      expect(ids(await backend.list("notes", { index: "byOwner", group: "x" }))).toEqual(["z", "a", "c", "b"])
      expect(ids(await backend.list("notes", { index: "byOwner", group: "x", desc: true }))).toEqual(["b", "c", "a", "z"])
      expect(ids(await backend.list("notes", { index: "byOwner", group: "x", from: 20, to: 20 }))).toEqual(["a", "c"])
      expect(ids(await backend.list("notes", { index: "byOwner", group: "x", from: 11 }))).toEqual(["a", "c", "b"])
      expect(ids(await backend.list("notes", { index: "byOwner", group: "x", to: 19 }))).toEqual(["z"])
      expect(ids(await backend.list("notes", { index: "byOwner", group: "x", desc: true, limit: 2, offset: 1 }))).toEqual(["c", "a"])
      expect(ids(await backend.list("notes", { index: "byOwner", group: "x", limit: 0 }))).toEqual([])
      expect(ids(await backend.list("notes", { index: "byOwner", group: "x:longer" }))).toEqual(["d"])
    })

    it("moves a record between index entries when it is rewritten, and drops an entry it no longer has", async () => {
      await backend.write([note({ id: "a", owner: "x", at: 1, open: true, origin: "call-1" }), note({ id: "b", owner: "x", at: 2, open: true })])
      expect(ids(await backend.list("notes", { index: "open", group: "" }))).toEqual(["a", "b"])
      await backend.write([note({ id: "a", owner: "w", at: 3, origin: "call-1" })])
      expect(ids(await backend.list("notes", { index: "open", group: "" }))).toEqual(["b"])
      expect(ids(await backend.list("notes", { index: "byOwner", group: "x" }))).toEqual(["b"])
      expect(ids(await backend.list("notes", { index: "origin", group: "call-1" }))).toEqual(["a"])
      expect(await backend.list("notes", { index: "origin", group: "call-2" })).toEqual([])
    })

    it("keeps collections apart, and pages a whole collection by id", async () => {
      await backend.write([note({ id: "n2", owner: "x", at: 1 }), note({ id: "n1", owner: "x", at: 2 }), note({ id: "n3", owner: "x", at: 0 })])
      await backend.write([{ collection: "other", id: "n0", value: { id: "n0" }, indexes: { byOwner: { group: "x", at: 0 } } }])
      expect(ids(await backend.list("other", { index: "byOwner", group: "x" }))).toEqual(["n0"])
      const first = await backend.page("notes", { limit: 2 })
      expect(first.map((row) => row.id)).toEqual(["n1", "n2"])
      expect((await backend.page("notes", { after: "n2", limit: 2 })).map((row) => row.id)).toEqual(["n3"])
    })

    it("writes a batch all or none, and applies concurrent writes in call order", async () => {
      await backend.write([note({ id: "a", owner: "x", at: 1 })])
      const writes = [backend.write([note({ id: "a", owner: "first", at: 1 })]), backend.write([note({ id: "a", owner: "second", at: 1 }), note({ id: "b", owner: "x", at: 2 })])]
      const read = backend.get("notes", "a")
      await Promise.all(writes)
      expect(await read).toMatchObject({ owner: "second" })
      // A batch naming an index the collection does not have fails whole.
      const bad = { collection: "notes", id: "c", value: { id: "c" }, indexes: { nope: { group: "", at: 0 } } }
      await expect(backend.write([note({ id: "d", owner: "x", at: 4 }), bad])).rejects.toThrow()
      expect(await backend.get("notes", "d")).toBeUndefined()
      expect(await backend.get("notes", "a")).toMatchObject({ owner: "second" })
    })

    it("keeps ids and groups with any character, NUL included, and orders ids bytewise", async () => {
      const odd = ["a\u0000b", "a\u0001", "a", "a\u0000", "é", "Z", "a\u0002"]
      await backend.write(odd.map((id) => note({ id, owner: "g\u0000h", at: 1 })))
      const bytewise = [...odd].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)))
      expect(ids(await backend.list("notes", { index: "byOwner", group: "g\u0000h" }))).toEqual(bytewise)
      expect((await backend.page("notes", { limit: 10 })).map((row) => row.id)).toEqual(bytewise)
      expect((await backend.page("notes", { after: "a\u0000", limit: 10 })).map((row) => row.id)).toEqual(bytewise.slice(bytewise.indexOf("a\u0000") + 1))
      expect(await backend.get("notes", "a\u0000b")).toEqual({ id: "a\u0000b", owner: "g\u0000h", at: 1 })
      await backend.write([{ collection: "notes", id: "a\u0000b", delete: true }])
      expect(await backend.get("notes", "a\u0000b")).toBeUndefined()
    })

    it("keeps what was written across a reopen", async () => {
      await backend.write([note({ id: "a", owner: "x", at: 5, open: true })])
      await backend.close()
      backend = await made.reopen(SCHEMA)
      expect(ids(await backend.list("notes", { index: "open", group: "" }))).toEqual(["a"])
      expect(await backend.get("notes", "a")).toEqual({ id: "a", owner: "x", at: 5, open: true })
    })
  })
}
