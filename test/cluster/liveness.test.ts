import pg from "pg"
import pino from "pino"
import { afterEach, describe, expect, it } from "vitest"
import { ClusterLink } from "../../src/cluster/link.ts"
import { connectionTag, newMemberId } from "../../src/cluster/member-id.ts"
import { freshDatabase, type FreshDatabase } from "../support/pg.ts"
import { eventually } from "../support/wait-for.ts"

let db: FreshDatabase | undefined
const links: ClusterLink[] = []

afterEach(async () => {
  for (const link of links.splice(0)) await link.close()
  await db?.drop()
  db = undefined
})

async function link(url: string): Promise<ClusterLink> {
  const opened = await ClusterLink.connect(url, pino({ level: "silent" }), () => {})
  links.push(opened)
  return opened
}

describe("which processes are alive to the leader", () => {
  it("a process that holds its lock, and one whose store connection is still open, are connected; one with neither is not", async () => {
    db = await freshDatabase()
    const leader = await link(db.url)
    const [locked, storing, gone] = [newMemberId(), newMemberId(), newMemberId()]
    await (await link(db.url)).holdProcessLock(locked)
    const store = new pg.Client({ connectionString: db.url, application_name: connectionTag(storing) })
    await store.connect()
    try {
      expect(await leader.connected([locked, storing, gone])).toEqual(new Set([locked, storing]))
    } finally {
      await store.end()
    }
    await eventually(async () => !(await leader.connected([storing])).has(storing), "the closed store connection gone", 5000)
  })

  it("a process killed while its store writes is dead only once the write has landed: the leader cannot decide before it", async () => {
    db = await freshDatabase()
    const leader = await link(db.url)
    const writer = newMemberId()
    const store = new pg.Client({ connectionString: db.url, application_name: connectionTag(writer) })
    store.on("error", () => {}) // its killing, below
    await store.connect()
    await store.query("CREATE TABLE claims (id TEXT PRIMARY KEY, status TEXT)")
    await store.query("INSERT INTO claims VALUES ('t:1', 'running')")
    // The process sends its last write (slow on a busy server) and is killed: its socket closes
    // at once, Postgres still finishes the statement.
    const write = store.query("UPDATE claims SET status = (SELECT 'done' FROM pg_sleep(1))").catch(() => {})
    await eventually(async () => (await leader.connected([writer])).has(writer), "the write under way", 5000)
    ;(store as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy()
    await write
    // While it may still land, the process counts as connected; once it is dead, the write is there.
    const read = new pg.Client({ connectionString: db.url })
    await read.connect()
    try {
      for (;;) {
        const alive = (await leader.connected([writer])).has(writer)
        const { rows } = await read.query<{ status: string }>("SELECT status FROM claims")
        if (!alive) {
          expect(rows[0]!.status).toBe("done")
          break
        }
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
    } finally {
      await read.end()
    }
  })
})
