import { afterEach, expect, it } from "vitest"
import { byRole, type ChatRequest, type Reply } from "../fakes/model-server.ts"
import { startHarness, type Harness } from "../support/harness.ts"

/** What the history tools read is written by the Supervisor: the user's message and the reply. */

let harness: Harness | undefined
afterEach(async () => {
  await harness?.close()
  harness = undefined
})

const afterTool = (req: ChatRequest) => req.messages.at(-1)?.role === "tool"
const teller = (req: ChatRequest): Reply => (afterTool(req) ? { text: "" } : { toolCalls: [{ name: "reply", args: { text: `you said: ${req.lastUserText}` } }] })

it("records a Teller turn's user message and reply in the conversation's history, with createdAt", async () => {
  harness = await startHarness(byRole({ teller }))
  const before = Date.now()
  await harness.channel.say("what's for dinner?")
  await harness.channel.waitForSent(1)
  await harness.app.supervisor.idle()
  const after = Date.now()

  const history = await harness.app.store.history.recent("test:c1", 10, 0)
  expect(history).toEqual([
    { role: "user", text: "what's for dinner?", createdAt: expect.any(String) },
    { role: "assistant", text: "you said: what's for dinner?", createdAt: expect.any(String) },
  ])
  const times = history.map((message) => Date.parse(message.createdAt))
  expect(history.map((message) => new Date(Date.parse(message.createdAt)).toISOString())).toEqual(history.map((message) => message.createdAt))
  expect(times[0]).toBeGreaterThanOrEqual(before)
  expect(times[1]).toBeGreaterThanOrEqual(times[0]!)
  expect(times[1]).toBeLessThanOrEqual(after)
  expect(await harness.app.store.history.between("test:c1", new Date(before), new Date(after))).toEqual(history)
  // Another conversation's history has none of it.
  expect(await harness.app.store.history.recent("test:c2", 10, 0)).toEqual([])
})
