import type { ModelMessage } from "ai"
import { expect, it } from "vitest"
import { z } from "zod"
import { runLoop, type LoopInput, type SessionLog } from "../../src/agent/loop.ts"
import type { Ruleset } from "../../src/permission/permission.ts"
import type { MessageRecord } from "../../src/store/records.ts"
import type { Capabilities } from "../../src/tool/capabilities.ts"
import { defineTool, toolFamily, type ToolDefinition } from "../../src/tool/tool.ts"
import { scriptedModel, sequence } from "../support/mock-model.ts"

// A family (an MCP server's tools) is expanded by the loop at the start of each run.

function tool(id: string, inputSchema?: ToolDefinition["inputSchema"]): ToolDefinition {
  return defineTool({ id, description: `${id} tool`, parameters: z.looseObject({}), inputSchema, execute: async () => `${id} ran` })
}

class Log implements SessionLog {
  records: MessageRecord[] = []
  async append(...entries: Array<Pick<MessageRecord, "message">>): Promise<void> {
    for (const entry of entries) this.records.push({ id: `r${this.records.length}`, sessionId: "s1", createdAt: new Date().toISOString(), ...entry })
  }
}

async function run(tools: ToolDefinition[], rules: Ruleset, calls: string[] = []) {
  const model = scriptedModel(sequence(...calls.map((name) => ({ toolCalls: [{ name, args: {} }] })), { text: "done" }))
  const log = new Log()
  await log.append({ message: { role: "user", content: "go" } as ModelMessage })
  const input: LoopInput = {
    model,
    system: "# Role: worker",
    compactionSystem: "",
    tools,
    rules,
    log,
    context: { role: "worker", agent: "default", conversation: "c", user: "u", sessionId: "s1", abort: new AbortController().signal, ...({} as Capabilities) },
    maxSteps: 10,
    maxRetries: 0,
    usableTokens: 100_000,
  }
  await runLoop(input)
  const results = log.records.flatMap((r) => (r.message.role === "tool" && Array.isArray(r.message.content) ? r.message.content : []))
  return { offered: model.calls[0]!.toolNames, results, model }
}

const allow = (permission: string): Ruleset[number] => ({ permission, pattern: "*", action: "allow" })

it("offers a family's current members in place of its stand-in, read afresh each run", async () => {
  let members = [tool("srv_a"), tool("srv_b")]
  const tools = [tool("fetch_url"), toolFamily("srv_*", () => members)]
  expect((await run(tools, [allow("*")])).offered).toEqual(["fetch_url", "srv_a", "srv_b"])
  members = []
  expect((await run(tools, [allow("*")])).offered).toEqual(["fetch_url"])
  members = [tool("srv_c")]
  const { offered, results } = await run(tools, [allow("*")], ["srv_c"])
  expect(offered).toEqual(["fetch_url", "srv_c"])
  expect(results).toMatchObject([{ toolName: "srv_c", output: { type: "json", value: "srv_c ran" } }])
})

it("hides a member a blanket deny names, by its own name or a wildcard, and refuses its calls", async () => {
  const tools = [toolFamily("srv_*", () => [tool("srv_read"), tool("srv_delete_one"), tool("srv_delete_all")])]
  const rules: Ruleset = [allow("srv_*"), { permission: "srv_delete_*", pattern: "*", action: "deny" }]
  const { offered, results } = await run(tools, rules, ["srv_delete_one"])
  expect(offered).toEqual(["srv_read"])
  expect(results).toMatchObject([{ toolName: "srv_delete_one", output: { type: "error-text", value: expect.stringContaining("unavailable tool 'srv_delete_one'") } }])
})

it("shows the model a member's own JSON Schema", async () => {
  const schema = { type: "object" as const, properties: { repo: { type: "string" as const, description: "owner/name" } }, required: ["repo"] }
  const { model } = await run([toolFamily("srv_*", () => [tool("srv_issues", schema)])], [allow("*")])
  expect(model.calls[0]!.options.tools?.[0]).toMatchObject({ name: "srv_issues", inputSchema: { properties: { repo: { type: "string", description: "owner/name" } }, required: ["repo"] } })
})
