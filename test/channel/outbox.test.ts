import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pino from "pino"
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import { UndeliverableMessage, type Channel } from "../../src/channel/channel.ts"
import type { OutgoingMessage } from "../../src/core/types.ts"
import type { OutboxRecord } from "../../src/store/records.ts"
import { Store } from "../../src/store/store.ts"
import { Outbox, type OutboxEvents } from "../../src/channel/outbox.ts"

/** Only timers and the clock are fake: SQLite's I/O completes on real setImmediate. */
const FAKE = { toFake: ["setTimeout", "clearTimeout", "Date"] as Array<"setTimeout" | "clearTimeout" | "Date"> }
/** Taken before any test fakes timers: bounds every wait in real time. */
const realSetTimeout = globalThis.setTimeout
const realClearTimeout = globalThis.clearTimeout
const log = pino({ level: process.env.STEWARD_TEST_LOG ?? "silent" })
const MINUTE = 60_000
const C1 = "test:c1"
const C2 = "test:c2"

/** Resolves with `promise`, or fails the test after `ms` of real time saying what it waited for. */
async function within<T>(promise: Promise<T>, what: string, ms = 3000): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = realSetTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms)
  })
  try {
    return await Promise.race([promise, timeout])
  } finally {
    realClearTimeout(timer)
  }
}

/** Counts occurrences of something; `reached(n)` resolves once it happened n times. */
class Counter {
  count = 0
  private waiters: Array<{ n: number; resolve: () => void }> = []
  bump(): void {
    this.count++
    for (const waiter of this.waiters.filter((w) => this.count >= w.n)) waiter.resolve()
    this.waiters = this.waiters.filter((w) => this.count < w.n)
  }
  reached(n: number): Promise<void> {
    if (this.count >= n) return Promise.resolve()
    return new Promise((resolve) => this.waiters.push({ n, resolve }))
  }
}

class Outage extends Error {}
class Refused extends Error {}

/** A chat platform whose answer to each attempt the test decides: `fail` returns the error to
 *  throw (or nothing to accept). Refused errors are permanent, everything else transient. */
class FakeChannel implements Channel {
  readonly name = "test"
  readonly attempts: Array<{ conversation: string; text: string }> = []
  readonly accepted: Array<{ conversation: string; text: string; messageId: string }> = []
  readonly attempted = new Counter()
  fail: (attempt: { conversation: string; text: string }) => unknown = () => undefined

  async start(): Promise<void> {}
  async stop(): Promise<void> {}
  async send(conversation: string, message: OutgoingMessage): Promise<{ messageId: string }> {
    const attempt = { conversation, text: message.text }
    this.attempts.push(attempt)
    try {
      const error = this.fail(attempt)
      if (error) throw error
      const messageId = `m${this.attempts.length}`
      this.accepted.push({ ...attempt, messageId })
      return { messageId }
    } finally {
      this.attempted.bump()
    }
  }
  async edit(): Promise<void> {}
  isPermanent(error: unknown): boolean {
    return error instanceof Refused
  }
}

describe("outbox retry policy and records (real store, fake clock)", () => {
  let dir: string
  let store: Store
  let channel: FakeChannel
  let outboxes: Outbox[]
  /** Bumped each time a conversation's sender stops: after a delivery, or once a backoff timer is set. */
  let changes: Counter

  function open(settled?: OutboxEvents["settled"]): Outbox {
    const outbox = new Outbox(store, new Map([["test", channel as Channel]]), log, { changed: () => changes.bump(), settled })
    outboxes.push(outbox)
    return outbox
  }
  const stored = async (id: string) => (await store.outbox.all()).find((record) => record.id === id)!
  const untilDue = (record: OutboxRecord) => Date.parse(record.nextAttemptAt!) - Date.now()

  beforeEach(async () => {
    vi.useFakeTimers(FAKE)
    vi.setSystemTime(new Date("2026-04-01T12:00:00Z"))
    dir = mkdtempSync(join(tmpdir(), "steward-outbox-"))
    store = await Store.open(dir)
    channel = new FakeChannel()
    outboxes = []
    changes = new Counter()
  })

  afterEach(async () => {
    for (const outbox of outboxes) await outbox.stop()
    await store.close()
    vi.restoreAllMocks()
    vi.useRealTimers()
    rmSync(dir, { recursive: true, force: true })
  })

  it("does not ask the store about a fresh origin (one that cannot have produced a record); any other origin is looked up", async () => {
    const outbox = open()
    await outbox.load()
    const lookups = vi.spyOn(store.outbox, "byOrigin")
    await outbox.add(C1, "fresh", "turn-1", {}, undefined, true)
    expect(lookups).not.toHaveBeenCalled()
    await outbox.add(C1, "maybe replayed", "turn-2")
    expect(lookups).toHaveBeenCalledWith("turn-2")
  })

  it("keeps only unsent records in memory: a delivered one is found in the store by its origin (also after a restart) and never sent again, and an edit still reaches its message", async () => {
    const outbox = open()
    await outbox.load()
    const first = await outbox.add(C1, "hello", "turn-1")
    await within(changes.reached(1), "the delivery")
    const memory = outbox as unknown as { pending: Map<string, unknown>; byOrigin: Map<string, unknown> }
    expect([memory.pending.size, memory.byOrigin.size]).toEqual([0, 0])
    expect(await outbox.add(C1, "hello", "turn-1")).toMatchObject({ id: first.id, status: "delivered", messageId: "m1" })
    await outbox.stop()
    const restarted = open()
    await restarted.load()
    expect(await restarted.add(C1, "hello", "turn-1")).toMatchObject({ id: first.id, status: "delivered" })
    const edits = vi.spyOn(channel, "edit")
    const edit = restarted.prepare(C1, "hello (edited)", "edit-1", first.id)
    await store.save({ outbox: [edit] })
    restarted.commit(edit)
    await within(changes.reached(2), "the edit")
    expect(edits).toHaveBeenCalledWith(C1, "m1", { text: "hello (edited)", buttons: undefined })
    expect(channel.accepted.map((m) => m.text)).toEqual(["hello"])
  })

  it("(a) keeps retrying a transient failure past any attempt limit, backoff capped at 5 min, then delivers once with its id", async () => {
    const outbox = open()
    await outbox.load()
    channel.fail = () => (channel.attempts.length <= 15 ? new Outage("connect ETIMEDOUT") : undefined)
    const { id } = await outbox.add(C1, "hello", "turn-1")
    for (let attempt = 1; attempt <= 15; attempt++) {
      await within(changes.reached(attempt), `failed attempt ${attempt} and its backoff timer`)
      const record = await stored(id)
      expect(record).toMatchObject({ status: "pending", attempts: attempt, error: "connect ETIMEDOUT" })
      expect(untilDue(record)).toBe(Math.min(5 * MINUTE, 1000 * 2 ** (attempt - 1)))
      expect(outbox.busy).toBe(true)
      await vi.advanceTimersToNextTimerAsync()
    }
    await within(changes.reached(16), "the 16th attempt")
    expect(channel.attempts).toHaveLength(16)
    expect(channel.accepted).toEqual([{ conversation: C1, text: "hello", messageId: "m16" }])
    const record = await stored(id)
    expect(record).toMatchObject({ status: "delivered", attempts: 16, messageId: "m16" })
    expect([record.error, record.nextAttemptAt]).toEqual([undefined, undefined])
    expect(outbox.busy).toBe(false)
    // Nothing is left to send, now or later.
    await vi.advanceTimersByTimeAsync(60 * MINUTE)
    expect(channel.attempts).toHaveLength(16)
    expect(vi.getTimerCount()).toBe(0)
  })

  it("(b) fails a permanently refused message at once, reports it through onSettled, and sends the next one", async () => {
    const settled: OutboxRecord[] = []
    const settling = new Counter()
    const outbox = open((record) => {
      settled.push(record)
      settling.bump()
    })
    await outbox.load()
    channel.fail = ({ text }) => (text === "report" ? new Refused("Forbidden: bot was blocked by the user") : undefined)
    const report = await outbox.add(C1, "report", "firing-report:f1", {}, "trigger-1/f1")
    const next = await outbox.add(C1, "next", "turn-2")
    await within(settling.reached(2), "both messages settled")
    const refused = await stored(report.id)
    expect(refused).toMatchObject({ status: "failed", attempts: 1, error: "Forbidden: bot was blocked by the user" })
    expect(refused.nextAttemptAt).toBeUndefined()
    expect(settled.map((record) => [record.id, record.status, record.firingId])).toEqual([
      [report.id, "failed", "trigger-1/f1"],
      [next.id, "delivered", undefined],
    ])
    await vi.advanceTimersByTimeAsync(60 * MINUTE)
    expect(channel.attempts.map((attempt) => attempt.text)).toEqual(["report", "next"])
    expect(outbox.busy).toBe(false)
  })

  it("stays busy until what it reports of a settled message (a firing's delivery, a notice) is done", async () => {
    let reported!: () => void
    const reporting = new Promise<void>((resolve) => (reported = resolve))
    const settled = new Counter()
    const outbox = open(async () => {
      settled.bump()
      await reporting
    })
    await outbox.load()
    await outbox.add(C1, "report", "firing-report:f1", {}, "trigger-1/f1")
    await within(settled.reached(1), "onSettled")
    expect(outbox.busy).toBe(true)
    reported()
    await within(changes.reached(1), "the sender to finish")
    expect(outbox.busy).toBe(false)
  })

  it("(b) takes an adapter's UndeliverableMessage as permanent even when the channel classifies nothing", async () => {
    const settled = new Counter()
    const outbox = open(() => settled.bump())
    channel.isPermanent = () => false
    channel.fail = () => new UndeliverableMessage("nothing to send: the message is empty")
    const { id } = await outbox.add(C1, " ", "turn-1")
    await within(settled.reached(1), "onSettled")
    await within(changes.reached(1), "the sender to finish")
    expect(await stored(id)).toMatchObject({ status: "failed", attempts: 1 })
    expect(vi.getTimerCount()).toBe(0)
  })

  it("(c) after a restart sends a pending record once, never a delivered one, and waits for a future nextAttemptAt", async () => {
    const now = Date.now()
    const base = { status: "pending" as const, attempts: 0, createdAt: new Date(now - MINUTE).toISOString() }
    const delivered: OutboxRecord = { ...base, id: "r-delivered", origin: "o1", conversation: C1, text: "already out", status: "delivered", attempts: 1, messageId: "old-1" }
    const pending: OutboxRecord = { ...base, id: "r-pending", origin: "o2", conversation: C1, text: "not yet out" }
    // Nine attempts already failed before the restart, the next one is due in 10 minutes.
    const later: OutboxRecord = { ...base, id: "r-later", origin: "o3", conversation: C2, text: "after a backoff", attempts: 9, error: "HTTP 502", nextAttemptAt: new Date(now + 10 * MINUTE).toISOString() }
    await store.save({ outbox: [delivered, pending, later] })
    // Its first attempt after the restart fails too: an outage longer than the old give-up point.
    channel.fail = ({ text }) => (text === "after a backoff" && !channel.attempts.slice(0, -1).some((a) => a.text === text) ? new Outage("HTTP 503") : undefined)

    const outbox = open()
    await outbox.load()
    await within(changes.reached(2), "both conversations' senders to stop")
    expect(channel.attempts.map((a) => a.text)).toEqual(["not yet out"])
    expect(await stored("r-pending")).toMatchObject({ status: "delivered", attempts: 1, messageId: "m1" })

    await vi.advanceTimersByTimeAsync(10 * MINUTE - 1)
    expect(channel.attempts).toHaveLength(1)
    await vi.advanceTimersByTimeAsync(1)
    await within(changes.reached(3), "the due attempt")
    expect(channel.attempts.map((a) => a.text)).toEqual(["not yet out", "after a backoff"])
    const retried = await stored("r-later")
    expect(retried).toMatchObject({ status: "pending", attempts: 10, error: "HTTP 503" })
    expect(untilDue(retried)).toBe(5 * MINUTE)

    await vi.advanceTimersByTimeAsync(5 * MINUTE)
    await within(changes.reached(4), "the retry after the capped backoff")
    expect(await stored("r-later")).toMatchObject({ status: "delivered", attempts: 11, messageId: "m3" })
    await outbox.stop()

    // One more restart: everything is on record as delivered, nothing goes out again.
    const again = open()
    await again.load()
    await vi.advanceTimersByTimeAsync(60 * MINUTE)
    expect(again.busy).toBe(false)
    expect(channel.attempts.map((a) => a.text)).toEqual(["not yet out", "after a backoff", "after a backoff"])
    expect(channel.accepted.map((a) => a.text)).toEqual(["not yet out", "after a backoff"])
    expect(await stored("r-delivered")).toEqual(delivered)
  })

  it("(d) does not send a delivered message again when recording its id failed, and records it once the store works", async () => {
    const settled: OutboxRecord[] = []
    const outbox = open((record) => void settled.push(record))
    const save = store.save.bind(store)
    const failedWrites = new Counter()
    vi.spyOn(store, "save").mockImplementation(async (records) => {
      if (failedWrites.count === 0 && records.outbox?.some((record) => record.status === "delivered")) {
        failedWrites.bump()
        throw new Error("SQLITE_IOERR: disk I/O error")
      }
      return save(records)
    })
    const one = await outbox.add(C1, "one", "turn-1")
    await within(failedWrites.reached(1), "the failed write of the delivered record")
    // A new message for the same conversation wakes its sender while the id is not on record.
    const two = await outbox.add(C1, "two", "turn-2")
    expect((await stored(one.id)).status).toBe("pending")
    await vi.advanceTimersToNextTimerAsync()
    await within(channel.attempted.reached(2), "the second message")
    await within(changes.reached(1), "the sender to finish")
    expect(channel.attempts.map((a) => a.text)).toEqual(["one", "two"])
    expect(await stored(one.id)).toMatchObject({ status: "delivered", messageId: "m1" })
    expect(await stored(two.id)).toMatchObject({ status: "delivered", messageId: "m2" })
    expect(settled.map((record) => record.id)).toEqual([one.id, two.id])
    await vi.advanceTimersByTimeAsync(60 * MINUTE)
    expect(channel.attempts).toHaveLength(2)
  })

  it("(d) stops without waiting out a write that keeps failing, leaving the record pending for the restart", async () => {
    const outbox = open()
    const save = store.save.bind(store)
    const failedWrites = new Counter()
    vi.spyOn(store, "save").mockImplementation(async (records) => {
      if (records.outbox?.some((record) => record.status === "delivered")) {
        failedWrites.bump()
        throw new Error("SQLITE_FULL: database or disk is full")
      }
      return save(records)
    })
    const { id } = await outbox.add(C1, "one", "turn-1")
    await within(failedWrites.reached(1), "the failed write")
    await within(outbox.stop(), "stop() while the write is being retried")
    // One last try at stop, then the documented window: sent again after the restart.
    expect(failedWrites.count).toBe(2)
    expect((await stored(id)).status).toBe("pending")
    expect(channel.attempts).toHaveLength(1)
  })
})
