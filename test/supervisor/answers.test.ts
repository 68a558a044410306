import { afterEach, describe, expect, it } from "vitest"
import { byRole, contentText, type ChatRequest, type Reply } from "../fakes/model-server.ts"
import { startHarness, type Harness } from "../support/harness.ts"
import { afterTool, say } from "../support/scripts.ts"

let harness: Harness | undefined
afterEach(async () => {
  await harness?.close()
  harness = undefined
})

/** A promise and the function that resolves it. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void
  const opened = new Promise<void>((resolve) => (open = resolve))
  return { opened, open }
}

const userTexts = (req: ChatRequest) => req.messages.filter((m) => m.role === "user").map((m) => contentText(m.content))
const summarised = (req: ChatRequest) => req.messages.some((m) => m.role === "assistant" && contentText(m.content).startsWith("SUMMARY"))

describe("every answer of a turn is posted", () => {
  // The first message is answered in one form while the second arrives; the step after answers
  // the second in the other form. Both answers reach the user, in order.
  const cases: Array<[string, Reply, Reply]> = [
    ["plain text, then a reply", { text: "answer one" }, say("answer two")],
    ["a reply, then plain text", say("answer one"), { text: "answer two" }],
    ["plain text, then plain text", { text: "answer one" }, { text: "answer two" }],
  ]
  for (const [name, first, second] of cases) {
    it(`posts both answers when a second message arrives mid-answer: ${name}`, async () => {
      const arrived = gate()
      const teller = async (req: ChatRequest): Promise<Reply> => {
        if (afterTool(req)) return { text: "" }
        if (req.lastUserText.includes("second message")) return second
        await arrived.opened
        return first
      }
      harness = await startHarness(byRole({ teller }))
      await harness.channel.say("first message")
      await harness.server.waitForRequests(1)
      await harness.channel.say("second message")
      arrived.open()
      await harness.app.supervisor.idle()
      expect(harness.channel.sent.map((m) => m.text)).toEqual(["answer one", "answer two"])
    })
  }
})

describe("compaction keeps the messages not answered yet", () => {
  it("keeps a message that arrived with the step that compacts, verbatim after the summary", async () => {
    const compactions: ChatRequest[] = []
    const teller = (req: ChatRequest): Reply => {
      if (afterTool(req)) return { text: "" }
      if (req.lastUserText.includes("first")) return { ...say("noted"), usage: { prompt: 5000, completion: 10 } }
      const word = userTexts(req).join(" ").match(/secret word is (\w+)/)?.[1] ?? "nothing"
      return say(`the word: ${word}`)
    }
    harness = await startHarness(byRole({ teller, compaction: (req) => (compactions.push(req), { text: "SUMMARY: the user said first" }) }), {
      MODEL_CONTEXT_TOKENS: "1000",
      MODEL_OUTPUT_TOKENS: "256",
    })
    await harness.channel.say("first")
    await harness.channel.waitForSent(1)
    await harness.channel.say("the secret word is kiwi")
    await harness.app.supervisor.idle()
    expect(compactions).toHaveLength(1)
    expect(userTexts(compactions[0]!).join(" ")).not.toContain("kiwi")
    expect(harness.channel.sent.map((m) => m.text)).toEqual(["noted", "the word: kiwi"])
  })

  it("keeps every message of a burst that pushed the turn into compaction, and compacts once", async () => {
    const burst = Array.from({ length: 7 }, (_, i) => `msg${i + 1} ${"long text ".repeat(150)}`)
    const started = gate()
    const arrived = gate()
    const compactions: ChatRequest[] = []
    const teller = async (req: ChatRequest): Promise<Reply> => {
      if (afterTool(req)) return { text: "" }
      if (!summarised(req)) {
        started.open()
        await arrived.opened
        return say("working on it")
      }
      const asked = userTexts(req).flatMap((text) => text.match(/msg\d/g) ?? [])
      return { toolCalls: [...new Set(asked)].map((msg) => ({ name: "reply", args: { text: `answer to ${msg}` } })) }
    }
    harness = await startHarness(byRole({ teller, compaction: (req) => (compactions.push(req), { text: "SUMMARY: the user started something" }) }), {
      // Room for the first step (the prompts include the untrusted-content rule), not for the burst.
      CONTEXT_BUDGET_TOKENS: "6000",
    })
    await harness.channel.say("start")
    await started.opened
    for (const text of burst) await harness.channel.say(text)
    arrived.open()
    await harness.app.supervisor.idle()
    expect(compactions).toHaveLength(1)
    expect(userTexts(compactions[0]!).join(" ")).not.toMatch(/msg\d/)
    expect(harness.channel.sent.map((m) => m.text)).toEqual(["working on it", ...burst.map((_, i) => `answer to msg${i + 1}`)])
  })

  it("answers a message that arrives while the compaction runs", async () => {
    const compacting = gate()
    const arrived = gate()
    const teller = (req: ChatRequest): Reply => {
      if (afterTool(req)) return { text: "" }
      if (req.lastUserText.includes("first")) return { ...say("noted"), usage: { prompt: 5000, completion: 10 } }
      const replied = req.messages.flatMap((m) => m.tool_calls ?? []).map((call) => call.function.arguments).join(" ")
      const asked = userTexts(req).flatMap((text) => text.match(/\b(second|third)\b/g) ?? []).filter((word) => !replied.includes(`answer to ${word}`))
      return { toolCalls: [...new Set(asked)].map((word) => ({ name: "reply", args: { text: `answer to ${word}` } })) }
    }
    const compaction = async (): Promise<Reply> => {
      compacting.open()
      await arrived.opened
      return { text: "SUMMARY: the user said first" }
    }
    harness = await startHarness(byRole({ teller, compaction }), { MODEL_CONTEXT_TOKENS: "1000", MODEL_OUTPUT_TOKENS: "256" })
    await harness.channel.say("first")
    await harness.channel.waitForSent(1)
    await harness.channel.say("second")
    await compacting.opened
    await harness.channel.say("third")
    arrived.open()
    await harness.app.supervisor.idle()
    expect(harness.channel.sent.map((m) => m.text).sort()).toEqual(["answer to second", "answer to third", "noted"])
  })
})
