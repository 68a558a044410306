import { setTimeout as sleep } from "node:timers/promises"
import pino from "pino"
import { describe, expect, it } from "vitest"
import { LiveMessages, type LiveWay } from "../../../adapters/live/live-messages.ts"
import { waitFor } from "../../support/wait-for.ts"

const INTERVAL_MS = 300

/** A chat's calls as the platform sees them: when each started and ended (`performance.now()`). */
type Call = { what: string; start: number; end: number }

/** A way that edits a message in place, one message per answer, each call taking a few ms. */
function editing(calls: Call[]): LiveWay<string, number> {
  let ids = 0
  return {
    name: "message",
    intervalMs: INTERVAL_MS,
    endsInPlace: true,
    show: async (_chat, text, ref) => {
      const start = performance.now()
      await sleep(5)
      calls.push({ what: `${ref === undefined ? "send" : "edit"} ${text}`, start, end: performance.now() })
      return ref ?? ++ids
    },
    remove: async () => {},
  }
}

/** A final edit made through `finish`, recorded as a call of the chat. */
const finalEdit = (calls: Call[]) => async () => {
  const start = performance.now()
  await sleep(5)
  calls.push({ what: "final", start, end: performance.now() })
}

/** Every call started an interval or more after the one before it ended. */
function expectPaced(calls: Call[]): void {
  const sorted = [...calls].sort((a, b) => a.start - b.start)
  for (let i = 1; i < sorted.length; i++) expect(sorted[i]!.start - sorted[i - 1]!.end, `${sorted[i - 1]!.what} → ${sorted[i]!.what}`).toBeGreaterThanOrEqual(INTERVAL_MS)
}

describe("LiveMessages pacing", () => {
  it("paces the calls of one chat, whichever answer makes them, the final edits included", async () => {
    const calls: Call[] = []
    const way = editing(calls)
    const messages = new LiveMessages(pino({ level: "silent" }), { message: way }, (chat) => chat)
    const first = messages.open("a1", "chat", [way])
    const second = messages.open("a2", "chat", [way])
    first.update("one")
    second.update("two")
    await waitFor(() => calls.length === 2, 5000)
    first.update("one more")
    second.update("two more")
    await waitFor(() => calls.length === 4, 5000)
    await Promise.all([messages.finish("a1", finalEdit(calls)), messages.finish("a2", finalEdit(calls))])
    expect(calls.map((call) => call.what).sort()).toEqual(["edit one more", "edit two more", "final", "final", "send one", "send two"])
    expectPaced(calls)
  })

  it("leaves another chat's calls unpaced by this one's", async () => {
    const calls: Call[] = []
    const way = editing(calls)
    const messages = new LiveMessages(pino({ level: "silent" }), { message: way }, (chat) => chat)
    messages.open("a1", "chat 1", [way]).update("one")
    messages.open("a2", "chat 2", [way]).update("two")
    await waitFor(() => calls.length === 2, 5000)
    expect(Math.abs(calls[1]!.start - calls[0]!.start)).toBeLessThan(INTERVAL_MS)
  })
})
