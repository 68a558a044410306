import { execFileSync } from "node:child_process"
import { cpSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { migrate, NewerDataError, SCHEMA_VERSION, type Migration } from "../../src/store/migrations.ts"
import { SCHEMA, meta, put } from "../../src/store/collections.ts"
import { SqliteBackend } from "../../src/store/sqlite.ts"
import { Store } from "../../src/store/store.ts"

const FIXTURE = new URL("../fixtures/store-v0/", import.meta.url).pathname
const C = "telegram:1001"

let dir: string
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "steward-migrate-"))
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

describe("migration 1: the keyv layout → collections with indexes", () => {
  it("reads back every record of a folder written by the previous version, through the new indexes", async () => {
    cpSync(FIXTURE, dir, { recursive: true })
    const store = await Store.open(dir)
    try {
      expect((await store.tasks()).map((t) => t.id)).toEqual(["T-CHILD", "T-PLANNER", "T-QUEUED", "T-RUNNING"])
      expect((await store.liveTasks()).map((t) => t.id)).toEqual(["T-QUEUED", "T-RUNNING"])
      expect((await store.taskByOrigin("S-TELLER:call-T-CHILD"))?.id).toBe("T-CHILD")
      expect((await store.finishedTasks(C, { limit: 10 })).map((t) => t.id).sort()).toEqual(["T-CHILD", "T-PLANNER"])
      expect(await store.session("S-TELLER")).toMatchObject({ role: "teller" })
      expect((await store.messages("S-TELLER")).map((m) => m.message.content)).toEqual(["hello", "hi"])
      expect((await store.events()).map((e) => e.text)).toEqual(["are you there?"])
      expect(await store.conversation(C)).toEqual({ id: C, user: C, tellerSessionId: "S-TELLER" })
      expect((await store.outbox.unsent()).map((r) => r.text)).toEqual(["still here"])
      expect(await store.outbox.byOrigin("S-TELLER:reply-1")).toMatchObject({ status: "delivered", messageId: "77" })
      expect((await store.history.recent(C, 10, 0)).map((m) => m.text)).toEqual(["hello", "are you there?", "hi"])
      expect((await store.history.recent("slack:T1:C1:1700000000.000100", 10, 0)).map((m) => m.text)).toEqual(["in a thread"])
      expect((await store.questions.open()).map((q) => q.id)).toEqual(["Q-OPEN"])
      expect(await store.questions.byOrigin("S-TELLER:ask-0")).toMatchObject({ status: "answered", answer: "yes" })
      expect(await store.seen("telegram:500")).toBe(true)
      expect(await store.seen("slack:Ev1")).toBe(true)
      expect(await store.seen("slack:Ev2")).toBe(false)
      expect(await store.users.pairing("K7M2QX9D")).toMatchObject({ user: "telegram:3003" })
      expect(await store.users.allowed("telegram:2002")).toBe(true)
      expect(await store.channelState("telegram").list("status/")).toEqual([{ key: "status/t1/a", value: { place: C, ref: 9 } }])
      expect((await store.schedules.liveTriggers()).map((t) => t.id)).toEqual(["TR-1"])
      expect((await store.schedules.triggerByOrigin("S-PLANNER:schedule-0"))?.status).toBe("ended")
      expect((await store.schedules.firingsOf("TR-1")).map((f) => f.outcome)).toEqual(["fired", "missed_skipped"])
      expect((await store.schedules.raisedNames()).map((r) => r.name)).toEqual(["deploy.done"])
    } finally {
      await store.close()
    }
    // The move is done once: a second start finds the data at the current version.
    const again = await Store.open(dir)
    expect((await again.tasks()).length).toBe(4)
    await again.close()
  })
})

describe("schema versions", () => {
  it("runs only the migrations newer than the data, in order, and records each version", async () => {
    const backend = await SqliteBackend.open(dir, SCHEMA)
    const ran: number[] = []
    const step = (version: number): Migration => ({ version, description: `step ${version}`, up: async () => void ran.push(version) })
    try {
      await migrate(backend, [step(1), step(2)])
      await migrate(backend, [step(1), step(2), step(3)])
      expect(ran).toEqual([1, 2, 3])
      expect(await backend.get("meta", "schema")).toEqual({ id: "schema", version: 3 })
    } finally {
      await backend.close()
    }
  })

  it("refuses data from a newer version: Store.open throws naming both versions, the CLI exits 2 with that line", async () => {
    const backend = await SqliteBackend.open(dir, SCHEMA)
    await backend.write([put(meta, { id: "schema", version: SCHEMA_VERSION + 1 })])
    await backend.close()
    await expect(Store.open(dir)).rejects.toThrow(NewerDataError)
    await expect(Store.open(dir)).rejects.toThrow(`schema version ${SCHEMA_VERSION + 1}; this one knows up to ${SCHEMA_VERSION}`)
    let status: number | undefined
    let stderr = ""
    try {
      execFileSync(process.execPath, [new URL("../../dist/cli.js", import.meta.url).pathname, "pairing", "list"], { env: { ...process.env, DATA_DIR: dir }, encoding: "utf8", stdio: "pipe" })
    } catch (error) {
      status = (error as { status: number }).status
      stderr = String((error as { stderr: string }).stderr)
    }
    expect(status).toBe(2)
    expect(stderr).toContain("written by a newer Steward")
  })
})
