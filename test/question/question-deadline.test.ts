import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pino from "pino"
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import { Questions } from "../../src/question/questions.ts"
import type { InboxEvent } from "../../src/store/records.ts"
import { Store } from "../../src/store/store.ts"
import { Outbox } from "../../src/channel/outbox.ts"

/** Only timers and the clock are fake: SQLite's I/O completes on real setImmediate. */
const FAKE = { toFake: ["setTimeout", "clearTimeout", "Date"] as Array<"setTimeout" | "clearTimeout" | "Date"> }
const log = pino({ level: "silent" })
const asker = (origin: string) => ({ conversation: "test:c1", user: "test:u1", origin })
const colours = { question: "Which colour?", options: ["Red", "Blue"], default: "Blue", timeout: 3600 }

let dir: string
let store: Store
let outbox: Outbox
let woken: InboxEvent[]

async function open(): Promise<Questions> {
  store = await Store.open(dir)
  outbox = new Outbox(store, new Map(), log)
  const questions = new Questions(store, outbox, log, (event) => woken.push(event))
  await questions.load()
  return questions
}

beforeEach(() => {
  vi.useFakeTimers(FAKE)
  vi.setSystemTime(new Date("2026-03-29T00:30:00Z"))
  dir = mkdtempSync(join(tmpdir(), "steward-questions-"))
  woken = []
})

afterEach(async () => {
  await store.close()
  vi.useRealTimers()
  rmSync(dir, { recursive: true, force: true })
})

describe("question deadlines (fake clock)", () => {
  it("expires exactly at the deadline with the default, and wakes the Teller once", async () => {
    const questions = await open()
    expect(await questions.ask(asker("s1:q1"), colours, "ask_user")).toBeUndefined()
    await vi.advanceTimersByTimeAsync(3_599_000)
    expect(woken).toHaveLength(0)
    await vi.advanceTimersByTimeAsync(1000)
    await vi.waitFor(() => expect(woken).toHaveLength(1))
    expect(woken[0]).toMatchObject({ kind: "answer", text: "Blue", conversation: "test:c1" })
    // The replayed call now gets the answer.
    expect(await questions.ask(asker("s1:q1"), colours, "ask_user")).toEqual({ answer: "Blue", source: "default" })
    questions.stop()
  })

  it("reaches a deadline weeks ahead (beyond setTimeout's range) in steps", async () => {
    const questions = await open()
    await questions.ask(asker("s1:q1"), { question: "Still there?", timeout: 30 * 86_400 }, "ask_user")
    await vi.advanceTimersByTimeAsync(25 * 86_400_000) // past 2^31-1 ms, not yet due
    expect(woken).toHaveLength(0)
    await vi.advanceTimersByTimeAsync(5 * 86_400_000)
    await vi.waitFor(() => expect(woken).toHaveLength(1))
    expect(await questions.ask(asker("s1:q1"), { question: "Still there?", timeout: 1 }, "ask_user")).toEqual({ answer: "", source: "timeout" })
    questions.stop()
  })

  it("keeps the deadline across a restart and expires an overdue question at start-up", async () => {
    let questions = await open()
    await questions.ask(asker("s1:q1"), colours, "ask_user")
    questions.stop()
    await store.close()
    await vi.advanceTimersByTimeAsync(1_800_000) // down for half an hour
    questions = await open()
    await vi.advanceTimersByTimeAsync(1_799_000)
    expect(woken).toHaveLength(0)
    questions.stop()
    await store.close()
    await vi.advanceTimersByTimeAsync(3_600_000) // down past the deadline
    questions = await open()
    await vi.waitFor(() => expect(woken).toHaveLength(1))
    expect(woken[0]).toMatchObject({ kind: "answer", text: "Blue" })
    questions.stop()
  })

  it("keeps the outcome of a long question in its closed message, the question cut short", async () => {
    const questions = await open()
    const long = `${"Please review this long plan. ".repeat(200)}Go ahead?`
    await questions.ask(asker("s1:q1"), { question: long, options: ["Yes", "No"], timeout: 60 }, "ask_user")
    await questions.take({ conversation: "test:c1", user: "test:u1", text: "yes" })
    const closed = (await store.outbox.all()).find((r) => r.editOf !== undefined)!
    expect(closed.text.length).toBeLessThan(1100)
    expect(closed.text).toMatch(/^Please review this long plan\. .*…\n\nAnswer: Yes$/s)
    questions.stop()
  })

  it("supersedes an open question by a newer one, resuming the older call with its default", async () => {
    const questions = await open()
    await questions.ask(asker("s1:q1"), colours, "ask_user")
    await questions.ask(asker("s1:q2"), { question: "Sure?", options: ["Yes", "No"], timeout: 60 }, "ask_user")
    expect(woken.map((e) => e.text)).toEqual(["Blue"])
    expect(questions.openIn("test:c1")?.question).toBe("Sure?")
    // Recorded as superseded, not as a timeout, and its message says so.
    const older = (await store.questions.all()).find((q) => q.origin === "s1:q1")
    expect(older).toMatchObject({ status: "superseded", answer: "Blue", source: "default" })
    expect((await store.outbox.all()).find((r) => r.editOf === older!.messageId)?.text).toBe("Which colour?\n\n(replaced by a newer question)")
    questions.stop()
  })
})
