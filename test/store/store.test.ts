import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { monotonicFactory } from "ulid"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { Store, type HistoryLine } from "../../src/store/store.ts"
import { getRecentHistoryTool } from "../../src/tool/get-recent-history.ts"
import type { ToolContext } from "../../src/tool/tool.ts"

/** The history of Store.recent and Store.between on real SQLite, as the history tools use it. */

const CHANNEL = "slack:T1:C1"
/** A thread of CHANNEL: its id extends CHANNEL's, its history must stay apart. */
const THREAD = `${CHANNEL}:1700000000.000100`
/** Another conversation whose id starts with CHANNEL's. */
const LONGER = "slack:T1:C10"
const T0 = Date.UTC(2026, 0, 10, 9, 0, 0, 0)

let dataDir: string
let store: Store
/** History ids are ULIDs of their creation time; a fresh factory keeps them in the order made. */
let id: ReturnType<typeof monotonicFactory>

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "steward-store-"))
  store = await Store.open(dataDir)
  id = monotonicFactory()
})

afterEach(async () => {
  await store.close()
  await rm(dataDir, { recursive: true, force: true })
})

/** One line per entry, `at` milliseconds after T0, alternating user and assistant. */
function lines(conversation: string, at: number[], prefix = "m"): HistoryLine[] {
  return at.map((ms, i) => ({ id: id(T0 + ms), conversation, role: i % 2 === 0 ? "user" : "assistant", text: `${prefix}${i + 1}` }))
}

const texts = (messages: Array<{ text: string }>) => messages.map((m) => m.text)

describe("Store.recent", () => {
  it("returns the window `count` long ending `offset` before the newest, oldest first, as {role, text, createdAt}", async () => {
    await store.save({ history: lines(CHANNEL, [0, 1000, 2000, 3000, 4000]) })
    const newest = await store.history.recent(CHANNEL, 2, 0)
    expect(newest).toEqual([
      { role: "assistant", text: "m4", createdAt: new Date(T0 + 3000).toISOString() },
      { role: "user", text: "m5", createdAt: new Date(T0 + 4000).toISOString() },
    ])
    expect(newest.map((m) => Object.keys(m).sort())).toEqual([
      ["createdAt", "role", "text"],
      ["createdAt", "role", "text"],
    ])
    expect(texts(await store.history.recent(CHANNEL, 2, 1))).toEqual(["m3", "m4"])
    expect(texts(await store.history.recent(CHANNEL, 3, 3))).toEqual(["m1", "m2"])
    expect(texts(await store.history.recent(CHANNEL, 50, 0))).toEqual(["m1", "m2", "m3", "m4", "m5"])
    expect(await store.history.recent(CHANNEL, 2, 5)).toEqual([])
  })

  it("keeps the order of messages written within one millisecond", async () => {
    await store.save({ history: lines(CHANNEL, [7, 7, 7, 7]) })
    expect(texts(await store.history.recent(CHANNEL, 3, 0))).toEqual(["m2", "m3", "m4"])
  })

  it("never returns another conversation's messages: not a thread's, not one whose id extends it", async () => {
    await store.save({ history: [...lines(CHANNEL, [0, 2000], "channel"), ...lines(THREAD, [1000, 3000], "thread"), ...lines(LONGER, [500, 4000], "longer")] })
    expect(texts(await store.history.recent(CHANNEL, 10, 0))).toEqual(["channel1", "channel2"])
    expect(texts(await store.history.recent(THREAD, 10, 0))).toEqual(["thread1", "thread2"])
    expect(texts(await store.history.recent(LONGER, 1, 0))).toEqual(["longer2"])
    expect(await store.history.recent("slack:T1:C", 10, 0)).toEqual([])
  })

  it("never returns more than asked for, even for a negative count or offset", async () => {
    await store.save({ history: lines(CHANNEL, [0, 1000, 2000]) })
    expect(await store.history.recent(CHANNEL, -1, 0)).toEqual([])
    expect(texts(await store.history.recent(CHANNEL, 1, -5))).toEqual(["m3"])
  })

  it("is clamped to 1–200 messages by get_recent_history", async () => {
    await store.save({ history: lines(CHANNEL, Array.from({ length: 230 }, (_, i) => i * 10)) })
    const ctx = { conversation: CHANNEL, history: store.history } as unknown as ToolContext
    const recent = async (count: number) => (await getRecentHistoryTool.execute!({ count, offset: 0 }, ctx)) as { messages: Array<{ text: string }> }
    const most = await recent(1000)
    expect(most.messages).toHaveLength(200)
    expect(most.messages[0]!.text).toBe("m31")
    expect(most.messages.at(-1)!.text).toBe("m230")
    expect(texts((await recent(0)).messages)).toEqual(["m230"])
    expect(texts((await recent(-5)).messages)).toEqual(["m230"])
    expect((await recent(200)).messages).toHaveLength(200)
  })

  it("reads what was written before the store was reopened", async () => {
    await store.save({ history: lines(CHANNEL, [0, 1]) })
    await store.close()
    store = await Store.open(dataDir)
    expect(texts(await store.history.recent(CHANNEL, 5, 0))).toEqual(["m1", "m2"])
  })
})

describe("Store.between", () => {
  it("includes both ends to the millisecond, oldest first", async () => {
    // Two lines in the same millisecond at each end, one just outside each end.
    await store.save({ history: lines(CHANNEL, [999, 1000, 1000, 1500, 2000, 2000, 2001]) })
    const window = await store.history.between(CHANNEL, new Date(T0 + 1000), new Date(T0 + 2000))
    expect(texts(window)).toEqual(["m2", "m3", "m4", "m5", "m6"])
    expect(window[0]).toEqual({ role: "assistant", text: "m2", createdAt: new Date(T0 + 1000).toISOString() })
    expect(texts(await store.history.between(CHANNEL, new Date(T0 + 1000), new Date(T0 + 1000)))).toEqual(["m2", "m3"])
    expect(texts(await store.history.between(CHANNEL, new Date(T0 + 1001), new Date(T0 + 1999)))).toEqual(["m4"])
    expect(await store.history.between(CHANNEL, new Date(T0 + 2002), new Date(T0 + 9999))).toEqual([])
    expect(await store.history.between(CHANNEL, new Date(T0 + 2000), new Date(T0 + 1000))).toEqual([])
  })

  it("never returns another conversation's messages", async () => {
    await store.save({ history: [...lines(CHANNEL, [0, 2000], "channel"), ...lines(THREAD, [1000, 2000], "thread"), ...lines(LONGER, [1000], "longer")] })
    const [from, to] = [new Date(T0), new Date(T0 + 2000)]
    expect(texts(await store.history.between(CHANNEL, from, to))).toEqual(["channel1", "channel2"])
    expect(texts(await store.history.between(THREAD, from, to))).toEqual(["thread1", "thread2"])
    expect(texts(await store.history.between(LONGER, from, to))).toEqual(["longer1"])
  })
})

describe("Store.channelState", () => {
  it("keeps each channel's entries apart, lists them by prefix in key order, and keeps them across a reopen", async () => {
    const telegram = store.channelState("telegram")
    await telegram.set("status/t2/b", { ref: 2 })
    await telegram.set("status/t1/a", { ref: 1 })
    await telegram.set("other/x", 0)
    await store.channelState("slack").set("status/t9/z", { ref: 9 })
    expect(await telegram.list("status/")).toEqual([
      { key: "status/t1/a", value: { ref: 1 } },
      { key: "status/t2/b", value: { ref: 2 } },
    ])
    await telegram.delete("status/t1/a")
    await store.close()
    store = await Store.open(dataDir)
    expect(await store.channelState("telegram").list("status/")).toEqual([{ key: "status/t2/b", value: { ref: 2 } }])
    expect(await store.channelState("slack").list("")).toEqual([{ key: "status/t9/z", value: { ref: 9 } }])
  })
})
