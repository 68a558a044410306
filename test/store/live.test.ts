import { taskRecord } from "../support/records.ts"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import type { TaskRecord } from "../../src/core/types.ts"
import { SEEN_RETENTION_MS, Store } from "../../src/store/store.ts"

const C = "telegram:1001"
let dir: string
let store: Store

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "steward-live-"))
  store = await Store.open(dir)
})
afterEach(async () => {
  await store.close()
  rmSync(dir, { recursive: true, force: true })
})

const task = taskRecord

describe("what start-up reads", () => {
  it("liveTasks: unfinished tasks, unreported batch heads, the heads of live tasks and everything those heads committed — not reported batches", async () => {
    await store.save({
      tasks: [
        task("A-DONE", { role: "planner", reported: true, children: ["A-CHILD"] }),
        task("A-CHILD", { parentTaskId: "A-DONE" }),
        task("B-HEAD", { role: "planner", reported: true, children: ["B-ENDED", "B-RUNNING"] }),
        task("B-ENDED", { parentTaskId: "B-HEAD" }),
        task("B-RUNNING", { parentTaskId: "B-HEAD", status: "running", endedAt: undefined }),
        task("C-UNREPORTED", { role: "planner", status: "failed" }),
        task("D-QUEUED", { status: "queued", endedAt: undefined }),
      ],
    })
    expect((await store.liveTasks()).map((t) => t.id)).toEqual(["B-ENDED", "B-HEAD", "B-RUNNING", "C-UNREPORTED", "D-QUEUED"])
    // Once reported, a batch leaves the live set.
    await store.save({ tasks: [task("C-UNREPORTED", { role: "planner", status: "failed", reported: true })] })
    expect((await store.liveTasks()).map((t) => t.id)).not.toContain("C-UNREPORTED")
  })

  it("finishedTasks pages a conversation's ended tasks newest first", async () => {
    const ended = (i: number) => task(`T${i}`, { endedAt: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString() })
    await store.save({ tasks: [ended(1), ended(2), ended(3), task("Q", { status: "queued", endedAt: undefined }), task("X", { conversation: "telegram:9" })] })
    const first = await store.finishedTasks(C, { limit: 2 })
    expect(first.map((t) => t.id)).toEqual(["T3", "T2"])
    expect((await store.finishedTasks(C, { limit: 2, before: first.at(-1)!.endedAt })).map((t) => t.id)).toEqual(["T1"])
  })
})

describe("dedupe ids", () => {
  it("are pruned after 24 h; a Telegram update at or below the pruned high-water mark is still recognised", async () => {
    await store.save({ seen: ["telegram:500", "telegram:498", "slack:Ev1"] })
    expect(await store.pruneSeen(Date.now() + SEEN_RETENTION_MS + 1000)).toBe(3)
    expect(await store.seen("slack:Ev1")).toBe(false)
    expect(await store.seen("telegram:499")).toBe(true)
    expect(await store.seen("telegram:500")).toBe(true)
    expect(await store.seen("telegram:501")).toBe(false)
    // The mark survives a restart.
    await store.close()
    store = await Store.open(dir)
    expect(await store.seen("telegram:400")).toBe(true)
    expect(await store.seen("telegram:600")).toBe(false)
  })

  it("keeps ids inside the window", async () => {
    await store.save({ seen: ["slack:Ev1", "telegram:7"] })
    expect(await store.pruneSeen(Date.now() + SEEN_RETENTION_MS - 1000)).toBe(0)
    expect(await store.seen("slack:Ev1")).toBe(true)
    expect(await store.seen("telegram:6")).toBe(false)
  })
})
