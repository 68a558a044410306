import { afterEach, describe, expect, it } from "vitest"
import { byRole, contentText, type ChatRequest, type Reply } from "../fakes/model-server.ts"
import { startHarness, type Harness } from "../support/harness.ts"
import { afterTool, say } from "../support/scripts.ts"

let harness: Harness | undefined
afterEach(async () => {
  await harness?.close()
  harness = undefined
})

/** Each conversation's Teller misbehaves its own way on every step. */
const misbehaving: Record<string, Reply> = {
  unknown: { toolCalls: [{ name: "no_such_tool", args: {} }] },
  json: { toolCalls: [{ name: "reply", args: "{not json" }] },
  schema: { toolCalls: [{ name: "reply", args: { wrong: 1 } }] },
  empty: { text: "" },
}

/** The kind of misbehaviour a conversation's first message names (other user messages carry facts). */
const kindOf = (req: ChatRequest) => req.messages.map((m) => (m.role === "user" ? contentText(m.content) : "")).find((text) => text in misbehaving) ?? ""

describe("no silent turns", () => {

  it("leaves the user a short message saying what went wrong when every step fails", async () => {
    harness = await startHarness(byRole({ teller: (req) => misbehaving[kindOf(req)]! }), { TELLER_MAX_STEPS: "3" })
    for (const kind of Object.keys(misbehaving)) await harness.channel.say(kind, `test:${kind}`)
    await harness.app.supervisor.idle()
    for (const kind of Object.keys(misbehaving)) {
      const sent = harness.channel.sent.filter((m) => m.conversation === `test:${kind}`)
      expect(sent, kind).toHaveLength(1)
      expect(sent[0]!.text).toMatch(/^Sorry — I could not come up with an answer to that/)
    }
    expect(harness.channel.sent.find((m) => m.conversation === "test:unknown")!.text).toContain("no_such_tool")
    expect(harness.channel.sent.find((m) => m.conversation === "test:empty")!.text).toContain("the model gave no answer")
  })

  it("relays a failed task's report itself when the Teller's turn over it is silent", async () => {
    harness = await startHarness(
      byRole({
        teller: (req) => {
          if (req.lastUserText.includes("<task-results>")) return misbehaving.unknown!
          return afterTool(req) ? { text: "" } : { toolCalls: [{ name: "delegate", args: { prompt: "do it" } }] }
        },
        planner: () => ({ error: { status: 400, message: "the planner's model refused" } }),
      }),
      { TELLER_MAX_STEPS: "2" },
    )
    await harness.channel.say("go")
    await harness.app.supervisor.idle()
    expect(harness.channel.sent).toHaveLength(1)
    expect(harness.channel.sent[0]!.text).toMatch(/^Results of your tasks:/)
    expect(harness.channel.sent[0]!.text).toContain("failed")
  })
})

describe("every message answered", () => {
  it("answers each of 10 messages sent within a second during a slow turn", async () => {
    // Each step answers every message not answered yet; messages keep arriving while it thinks.
    const teller = async (req: ChatRequest): Promise<Reply> => {
      await new Promise((resolve) => setTimeout(resolve, 150))
      if (req.toolNames.length === 0) return { text: "" }
      const asked = req.messages.filter((m) => m.role === "user").map((m) => /\b(m\d+)\b/.exec(contentText(m.content))?.[1]).filter(Boolean)
      const answered = req.messages.flatMap((m) => m.tool_calls ?? []).filter((call) => call.function.name === "reply").length
      const open = asked.slice(answered)
      // A busy Teller: it also looks at its tasks each step, so a reply does not end its run.
      const look = { name: "list_tasks", args: { scope: "all" } }
      return open.length > 0 ? { toolCalls: [...open.map((m) => ({ name: "reply", args: { text: `answer to ${m}` } })), look] } : { text: "" }
    }
    harness = await startHarness(byRole({ teller }), { TELLER_MAX_STEPS: "3" })
    for (let i = 1; i <= 10; i++) {
      await harness.channel.say(`m${i}`)
      await new Promise((resolve) => setTimeout(resolve, 90))
    }
    await harness.app.supervisor.idle()
    const answers = harness.channel.sent.map((m) => m.text).sort()
    expect(answers).toEqual(Array.from({ length: 10 }, (_, i) => `answer to m${i + 1}`).sort())
  })
})
