import { afterEach, describe, expect, it, vi } from "vitest"
import { Store, type StoredRecords } from "../../src/store/store.ts"
import { byRole, contentText, type ChatRequest, type Reply } from "../fakes/model-server.ts"
import { startHarness, type Harness } from "../support/harness.ts"
import { afterTool } from "../support/scripts.ts"

let harness: Harness | undefined
afterEach(async () => {
  vi.restoreAllMocks()
  await harness?.close()
  harness = undefined
})

/** The Teller delegates the user's message; the Planner answers; the Teller relays each batch of
 *  results it is given (every results message since its last step), as a model would. */
const script = byRole({
  teller: (req: ChatRequest): Reply => {
    if (afterTool(req)) return { text: "" }
    const since = req.messages.slice(req.messages.findLastIndex((m) => m.role === "assistant") + 1)
    const results = since.filter((m) => m.role === "user").map((m) => contentText(m.content)).filter((text) => text.includes("<task-results>"))
    if (results.length > 0) return { toolCalls: results.map((text) => ({ name: "reply", args: { text: `Done: ${/<task id="(\w+)"/.exec(text)?.[1]}` } })) }
    return { toolCalls: [{ name: "delegate", args: { prompt: "work" } }] }
  },
  planner: () => ({ text: "planned" }),
})

const MESSAGE = { eventId: "test:event-1" }
const bounded = <T>(promise: Promise<T>, what: string, ms = 15_000) =>
  Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`timed out: ${what}`)), ms))])

describe("exactly one wake per result, whatever the crash point", () => {
  it("crashes at every write of a delegate round trip in turn, restarts, and counts the replies per result", async () => {
    const save = Store.prototype.save
    let crashPoints = 0
    for (let crashAt = 1; ; crashAt++) {
      harness = await startHarness(script)
      let writes = 0
      let crash!: () => void
      const crashed = new Promise<"crashed">((resolve) => (crash = () => resolve("crashed")))
      // The crash: the write numbered crashAt and every one after it never reach the disk.
      const spy = vi.spyOn(Store.prototype, "save").mockImplementation(function (this: Store, records: Partial<StoredRecords>) {
        if (++writes < crashAt) return save.call(this, records)
        crash()
        return Promise.reject(new Error("SIGKILL"))
      })
      const before = harness.channel
      // A message the crash kept from being stored is delivered again by the platform.
      await before.say("go", "test:c1", "test:u1", MESSAGE).catch(() => {})
      const outcome = await bounded(Promise.race([crashed, harness.app.supervisor.idle().then(() => "idle" as const)]), `crash point ${crashAt}`)
      if (outcome === "idle") {
        spy.mockRestore()
        expect(before.sent.filter((m) => m.text.startsWith("Done:"))).toHaveLength(1)
        await harness.close()
        harness = undefined
        break
      }
      crashPoints++
      // Dead: nothing more leaves the old process.
      before.failures = Number.POSITIVE_INFINITY
      await harness.restart({ whileDown: async () => spy.mockRestore(), keepSent: true })
      await harness.channel.say("go", "test:c1", "test:u1", MESSAGE)
      await bounded(harness.app.supervisor.idle(), `idle after the crash at write ${crashAt}`)
      const done = harness.channel.sent.filter((m) => m.text.startsWith("Done:"))
      expect(done.map((m) => m.text), `replies per result after a crash at write ${crashAt}`).toHaveLength(1)
      await harness.close()
      harness = undefined
    }
    expect(crashPoints).toBeGreaterThan(5)
  }, 240_000)
})
