import type { ModelMessage } from "ai"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { runLoop, type LoopInput, type SessionLog } from "../../src/agent/loop.ts"
import { estimateTokens } from "../../src/agent/context.ts"
import type { Ruleset } from "../../src/permission/permission.ts"
import type { MessageRecord } from "../../src/store/records.ts"
import type { Capabilities } from "../../src/tool/capabilities.ts"
import type { Role } from "../../src/core/types.ts"
import { defineTool, type ToolContext, type ToolDefinition } from "../../src/tool/tool.ts"
import type { UsageSample } from "../../src/usage/usage.ts"
import { byRole, messageText, scriptedModel, sequence, type Reply, type Script } from "../support/mock-model.ts"

class MemoryLog implements SessionLog {
  records: MessageRecord[] = []
  async append(...entries: Array<Pick<MessageRecord, "message"> & Partial<Pick<MessageRecord, "kind" | "usage" | "eventId">>>): Promise<void> {
    for (const entry of entries) this.records.push({ id: `r${this.records.length + 1}`, sessionId: "s1", createdAt: new Date().toISOString(), ...entry })
  }
}

const allowAll: Ruleset = [{ permission: "*", pattern: "*", action: "allow" }]
const calls = (...names: string[]): Reply => ({ toolCalls: names.map((name) => ({ name, args: name === "reply" ? { text: "hi" } : {} })) })
/** A step that says its final text beside its calls. */
const saying = (text: string, ...names: string[]): Reply => ({ ...calls(...names), text })

/** Tools by name that record their calls and return null, like reply. */
function tools(names: string[], ran: string[] = []): ToolDefinition[] {
  return names.map((id) =>
    defineTool({
      id,
      description: `The ${id} tool.`,
      parameters: id === "reply" ? z.object({ text: z.string().min(1) }) : z.object({}),
      execute: async () => {
        ran.push(id)
        return null
      },
    }),
  )
}

function setup(role: Role, script: Script, overrides: Partial<LoopInput> = {}) {
  const model = scriptedModel(script)
  const log = new MemoryLog()
  const context: Omit<ToolContext, "callId"> = { role, agent: role, conversation: "test:c1", user: "test:u1", sessionId: "s1", abort: new AbortController().signal, ...({} as Capabilities) }
  const input: LoopInput = {
    model,
    system: `# Role: ${role}\nInstructions.`,
    compactionSystem: "# Role: compaction\nSummarise.",
    tools: tools(["reply", "delegate", "schedule", "list_tasks", "ask_user"]),
    rules: allowAll,
    log,
    context,
    maxSteps: 10,
    maxRetries: 0,
    usableTokens: 1_000_000,
    ...overrides,
  }
  return { model, log, input }
}

const user = (text: string): ModelMessage => ({ role: "user", content: text })

describe("runLoop: a step whose calls all end the run is the last", () => {
  it.each([
    ["teller", ["reply"], ""],
    ["teller", ["delegate", "reply"], ""],
    ["planner", ["delegate"], "Dispatched."],
    ["planner", ["delegate", "schedule", "delegate"], "Dispatched two, scheduled one."],
  ] as const)("%s: %j ends the run without another model call", async (role, names, text) => {
    const { model, log, input } = setup(role, sequence(saying(text, ...names)))
    await log.append({ message: user("go") })
    await expect(runLoop(input)).resolves.toEqual({ status: "done", text })
    expect(model.calls).toHaveLength(1)
    expect(log.records.at(-1)!.message.role).toBe("tool")
  })

  it.each([
    ["teller", ["delegate"]],
    ["teller", ["reply", "list_tasks"]],
    ["planner", ["delegate", "list_tasks"]],
    ["worker", ["list_tasks"]],
  ] as const)("%s: %j is followed by another model call", async (role, names) => {
    const { model, log, input } = setup(role, sequence(saying("working", ...names), { text: "finished" }))
    await log.append({ message: user("go") })
    await expect(runLoop(input)).resolves.toEqual({ status: "done", text: "finished" })
    expect(model.calls).toHaveLength(2)
  })

  it("gives the model another step when an ending call failed", async () => {
    const { model, log, input } = setup("teller", sequence({ toolCalls: [{ name: "reply", args: { text: "" } }] }, calls("reply")))
    await log.append({ message: user("go") })
    await expect(runLoop(input)).resolves.toEqual({ status: "done", text: "" })
    expect(model.calls).toHaveLength(2)
    expect(model.calls[1]!.lastToolResults[0]).toMatchObject({ toolName: "reply", isError: true })
  })

  it("lets a Planner that stages without a final text read the results (a task id to wait for)", async () => {
    const { model, log, input } = setup("planner", sequence(calls("delegate"), saying("Dispatched both.", "delegate")))
    await log.append({ message: user("go") })
    await expect(runLoop(input)).resolves.toEqual({ status: "done", text: "Dispatched both." })
    expect(model.calls).toHaveLength(2)
  })

  it("still calls the model when input arrived while the ending step ran", async () => {
    const queue = [[{ eventId: "e1", text: "hello", fromUser: true }], [{ eventId: "e2", text: "and another thing", fromUser: true }]]
    const { model, input } = setup("teller", sequence(calls("reply"), calls("reply")), { takeInput: () => queue.shift() ?? [] })
    await expect(runLoop(input)).resolves.toEqual({ status: "done", text: "" })
    expect(model.calls).toHaveLength(2)
    expect(model.calls[1]!.lastUserText).toContain("and another thing")
  })

  it("resumed after a crash that followed the ending step's results, makes no model call", async () => {
    const ran: string[] = []
    const { model, log, input } = setup("teller", sequence(), { tools: tools(["reply", "delegate"], ran) })
    await log.append(
      { message: user("go") },
      { message: { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "delegate", input: {} }, { type: "tool-call", toolCallId: "c2", toolName: "reply", input: { text: "on it" } }] } },
      { message: { role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "delegate", output: { type: "json", value: { taskId: "t1" } } }] } },
    )
    // Crashed before the reply ran: the reply runs once, then the run ends without a model call.
    await expect(runLoop(input)).resolves.toEqual({ status: "done", text: "" })
    expect(ran).toEqual(["reply"])
    expect(model.calls).toHaveLength(0)
    // Crashed after it: nothing runs and nothing is called.
    await expect(runLoop(input)).resolves.toEqual({ status: "done", text: "" })
    expect(ran).toEqual(["reply"])
    expect(model.calls).toHaveLength(0)
  })
})

describe("runLoop: stable prefix", () => {
  it("puts the environment before each new input, written with it, and keeps the system prompt the same", async () => {
    let tick = 0
    const queue = [[{ eventId: "e1", text: "first", fromUser: true }], [], [{ eventId: "e2", text: "second", fromUser: true }]]
    const { model, log, input } = setup("teller", sequence(calls("list_tasks"), calls("reply"), calls("reply")), {
      environment: () => `<env>\n  Current time: ${++tick}\n</env>`,
      takeInput: () => queue.shift() ?? [],
    })
    await runLoop(input)
    await runLoop(input)
    expect(model.calls).toHaveLength(3)
    expect(new Set(model.calls.map((c) => c.system)).size).toBe(1)
    expect(model.calls[0]!.system).not.toContain("<env>")
    const texts = log.records.filter((r) => r.message.role === "user").map((r) => [messageText(r.message as never), r.eventId])
    expect(texts).toEqual([
      ["<env>\n  Current time: 1\n</env>", undefined],
      ["first", "e1"],
      ["<env>\n  Current time: 2\n</env>", undefined],
      [expect.stringContaining("second"), "e2"],
    ])
    // Each request starts with the whole of the one before it.
    const sent = model.calls.map((c) => JSON.stringify(c.prompt.map(({ role, content }) => ({ role, content }))).slice(0, -1))
    expect(sent[1]!.startsWith(sent[0]!)).toBe(true)
    expect(sent[2]!.startsWith(sent[1]!)).toBe(true)
  })

  it("marks Anthropic cache breakpoints: instructions, long-lived context, the previous request's end and the conversation's end", async () => {
    const { model, log, input } = setup("teller", sequence(calls("list_tasks"), calls("reply")), { longLived: "<memory>likes tea</memory>" })
    await log.append({ message: user("go") })
    await runLoop(input)
    const marked = (c: (typeof model.calls)[number]) => c.prompt.flatMap((m, i) => (m.providerOptions?.anthropic ? [`${i}:${m.role}`] : []))
    expect(marked(model.calls[0]!)).toEqual(["0:system", "1:system", "2:user"])
    expect(marked(model.calls[1]!)).toEqual(["0:system", "1:system", "2:user", "4:tool"])
    expect(model.calls[1]!.prompt[2]!.providerOptions).toEqual({ anthropic: { cacheControl: { type: "ephemeral" } } })
    expect(model.calls[0]!.options.providerOptions?.openai?.promptCacheKey).toMatch(/^steward-[0-9a-f]{32}$/)
    expect(model.calls[1]!.options.providerOptions).toEqual(model.calls[0]!.options.providerOptions)
  })
})

describe("runLoop: context budget", () => {
  it("compacts before a prompt would pass the budget, and never sends one over it", async () => {
    const budget = 6_000
    const summaries: string[] = []
    const prompts: number[] = []
    const script = byRole({
      teller: (c) => {
        prompts.push(estimateTokens(c.prompt) + estimateTokens(c.options.tools ?? []))
        return { toolCalls: [{ name: "reply", args: { text: "x".repeat(2_000) } }] }
      },
      compaction: () => ({ text: "SUMMARY" }),
    })
    const { input, log } = setup("teller", script, { budgetTokens: budget, onCompacted: async (s) => void summaries.push(s) })
    for (let turn = 0; turn < 40; turn++) {
      await log.append({ message: user(`message ${turn} ${"y".repeat(2_000)}`) })
      await runLoop(input)
    }
    expect(summaries.length).toBeGreaterThan(0)
    expect(Math.max(...prompts)).toBeLessThanOrEqual(budget)
  })

  it("reports every call's usage, the compaction's too, with the cached input", async () => {
    const samples: UsageSample[] = []
    // The first step used more than the window allows: a compaction comes before the second.
    const script = byRole({ worker: sequence({ ...calls("list_tasks"), usage: { input: 700, output: 9, cached: 600 } }, { text: "done" }), compaction: () => ({ text: "SUMMARY" }) })
    const { input, log } = setup("worker", script, { onUsage: (s) => samples.push(s), usableTokens: 500 })
    input.context.taskId = "t1"
    await log.append({ message: user("go") })
    await runLoop(input)
    expect(samples.map((s) => [s.role, s.input, s.cachedInput, s.output])).toEqual([
      ["worker", 700, 600, 9],
      ["compaction", 10, 0, 5],
      ["worker", 10, 0, 5],
    ])
    expect(samples[0]).toMatchObject({ agent: "worker", conversation: "test:c1", sessionId: "s1", taskId: "t1", model: "mock:scripted" })
    expect(Date.parse(samples[0]!.at)).not.toBeNaN()
  })
})

describe("runLoop: context budget, bad input", () => {
  it("compacts an input larger than the budget once, and then answers instead of compacting again", async () => {
    const roles: string[] = []
    const script = byRole({
      teller: (c) => (roles.push("teller"), calls("reply")),
      compaction: () => (roles.push("compaction"), { text: "The user pasted a very long text." }),
    })
    const { input, log } = setup("teller", script, { budgetTokens: 4_000 })
    await log.append({ message: user("z".repeat(40_000)) })
    await expect(runLoop(input)).resolves.toEqual({ status: "done", text: "" })
    expect(roles).toEqual(["compaction", "teller"])
  })
})
