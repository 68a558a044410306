import { describe, expect, it } from "vitest"
import type { LeaderCalls } from "../../src/cluster/leader-calls.ts"
import { leaderHandlers, routedCapabilities } from "../../src/cluster/routed.ts"
import type { Question } from "../../src/question/questions.ts"
import type { Caller, Capabilities } from "../../src/tool/capabilities.ts"
import type { ToolContext } from "../../src/tool/tool.ts"
import { startHub, transports } from "./protocol-support.ts"
import { callTool } from "./support.ts"

// A server's question during a call that runs in a process that does not lead: it travels to
// the leader (which runs the questions) as a leader call — as JSON, like pg-boss carries it —
// and the answer travels back to the server.

describe("a server's question from a call on a process that does not lead", () => {
  it("is asked by the leader, of the calling user, and the answer reaches the server", async () => {
    const asked: Array<{ caller: Caller; key: string; question: Question }> = []
    const leader = {
      questions: {
        inquire: async (caller: Caller, key: string, question: Question) => (asked.push({ caller, key, question }), { answer: "Ada", source: "user" }),
      },
    } as unknown as Capabilities
    const handlers = leaderHandlers(leader, async () => {}, async () => {}, new AbortController().signal)
    const json = <T>(value: T): T => JSON.parse(JSON.stringify(value))
    const calls = {
      call: async (method: string, args: unknown[]) => json(await (handlers[method] as (...a: unknown[]) => Promise<unknown>)(...json(args))),
    } as unknown as LeaderCalls
    const here = routedCapabilities({ questions: {} } as unknown as Capabilities, calls, () => false)
    const [, stdio] = transports[0]!
    const { tool } = await startHub(await stdio())
    const result = await callTool(tool("proto_ask_name"), {}, undefined, { questions: here.questions, permit: async () => true, user: "test:eve", conversation: "test:eve-dm" } as Partial<ToolContext>)
    expect(JSON.parse(result.text)).toEqual({ action: "accept", content: { name: "Ada" } })
    expect(asked).toHaveLength(1)
    expect(asked[0]!.caller).toMatchObject({ user: "test:eve", conversation: "test:eve-dm" })
    expect(asked[0]!.question.question).toContain("Who are you?")
  })
})
