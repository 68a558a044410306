import type { ModelMessage, ToolModelMessage } from "ai"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { MAX_TOOL_INPUT_CHARS, runLoop, type SessionLog } from "../../src/agent/loop.ts"
import type { MessageRecord } from "../../src/store/records.ts"
import type { Capabilities } from "../../src/tool/capabilities.ts"
import { defineTool } from "../../src/tool/tool.ts"
import { messageText, scriptedModel, sequence, type Script } from "../support/mock-model.ts"

class MemoryLog implements SessionLog {
  records: MessageRecord[] = []
  async append(...entries: Array<Pick<MessageRecord, "message"> & Partial<Pick<MessageRecord, "kind" | "usage" | "eventId">>>): Promise<void> {
    for (const entry of entries) this.records.push({ id: `r${this.records.length + 1}`, sessionId: "s1", createdAt: new Date().toISOString(), ...entry })
  }
}

const user = (text: string): ModelMessage => ({ role: "user", content: text })

function run(script: Script, takeInput?: () => Array<{ eventId: string; text: string; fromUser: boolean }>, maxSteps = 4) {
  const executed: string[] = []
  const echo = defineTool({
    id: "echo",
    description: "Echoes its input.",
    parameters: z.object({ text: z.string() }),
    execute: async (args) => void executed.push(args.text),
  })
  const log = new MemoryLog()
  const input = {
    model: scriptedModel(script),
    system: "# Role: teller",
    compactionSystem: "# Role: compaction",
    tools: [echo],
    rules: [{ permission: "*", pattern: "*", action: "allow" as const }],
    log,
    context: { role: "teller" as const, agent: "teller", conversation: "c1", user: "u1", sessionId: "s1", abort: new AbortController().signal, ...({} as Capabilities) },
    maxSteps,
    maxRetries: 0,
    usableTokens: 1_000_000,
    takeInput,
  }
  return { log, executed, input }
}

describe("runLoop limits", () => {
  it("refuses tool input over the size limit with a clear tool error, and runs nothing", async () => {
    const big = "x".repeat(MAX_TOOL_INPUT_CHARS + 1)
    const { log, executed, input } = run(sequence({ toolCalls: [{ name: "echo", args: { text: big }, id: "c1" }] }, { text: "ok" }))
    await log.append({ message: user("hi") })
    await runLoop(input)
    expect(executed).toEqual([])
    const result = log.records.flatMap((r) => (r.message.role === "tool" ? (r.message as ToolModelMessage).content : []))[0]
    expect(result).toMatchObject({ type: "tool-result", output: { type: "error-text", value: expect.stringMatching(/^Input too large for tool echo: \d+ characters, the limit is 256000/) } })
  })

  it("gives each message handed in mid-run steps of its own, so none goes unanswered", async () => {
    // Five messages arrive after the first step; the model answers one per step.
    let handed = false
    const takeInput = () => {
      if (handed || log.records.length < 2) return []
      handed = true
      return Array.from({ length: 5 }, (_, i) => ({ eventId: `e${i}`, text: `m${i}`, fromUser: true }))
    }
    const script: Script = (call) => {
      const asked = call.prompt.filter((m) => m.role === "user").flatMap((m) => /\b(m\d)\b/.exec(messageText(m))?.[1] ?? [])
      const answered = executed.length
      return asked[answered] && call.toolNames.length > 0 ? { toolCalls: [{ name: "echo", args: { text: asked[answered]! } }] } : { text: "done" }
    }
    const { log, executed, input } = run(script, takeInput, 3)
    await log.append({ message: user("m9 first") })
    await runLoop(input)
    expect(executed).toEqual(["m9", "m0", "m1", "m2", "m3", "m4"])
  })
})
