import type { ModelMessage, ToolModelMessage } from "ai"
import { z } from "zod"
import type { LoopInput, SessionLog } from "../../src/agent/loop.ts"
import type { Ruleset } from "../../src/permission/permission.ts"
import type { MessageRecord } from "../../src/store/records.ts"
import type { Capabilities } from "../../src/tool/capabilities.ts"
import { defineTool, type ToolContext, type ToolDefinition } from "../../src/tool/tool.ts"
import { messageText, scriptedModel, type ModelCall, type Reply, type Script } from "../support/mock-model.ts"

/** What runLoop's tests run on: a scripted model, an in-memory log, an `echo` tool, and the replies and messages they script. */

/** An in-memory SessionLog. */
export class MemoryLog implements SessionLog {
  records: MessageRecord[] = []
  async append(...entries: Array<Pick<MessageRecord, "message"> & Partial<Pick<MessageRecord, "kind" | "usage" | "eventId">>>): Promise<void> {
    for (const entry of entries) {
      this.records.push({ id: `r${this.records.length + 1}`, sessionId: "s1", createdAt: new Date().toISOString(), ...entry })
    }
  }
  roles(): string[] {
    return this.records.map((r) => r.message.role)
  }
}

export const SYSTEM = "# Role: worker\nYou are a test worker."
export const COMPACTION_SYSTEM = "# Role: compaction\nSummarise."
export const allowAll: Ruleset = [{ permission: "*", pattern: "*", action: "allow" }]

export const user = (text: string): ModelMessage => ({ role: "user", content: text })
export const call = (name: string, args: object | string, id?: string): Reply => ({ toolCalls: [{ name, args, ...(id ? { id } : {}) }] })
export const text = (t: string): Reply => ({ text: t })

/** The `echo` tool: records every execution. */
export function echoTool(executed: Array<{ text: string; callId: string }> = [], onExecute?: () => void) {
  return defineTool({
    id: "echo",
    description: "Echoes its input.",
    parameters: z.object({ text: z.string() }),
    execute: async (args, ctx) => {
      onExecute?.()
      executed.push({ text: args.text, callId: ctx.callId })
      return { echoed: args.text }
    },
  })
}

export function setup(script: Script, tools: ToolDefinition[], overrides: Partial<LoopInput> = {}) {
  const model = scriptedModel(script)
  const log = new MemoryLog()
  const abort = new AbortController()
  const context: Omit<ToolContext, "callId"> = {
    role: "worker",
    agent: "default",
    conversation: "c1",
    user: "u1",
    sessionId: "s1",
    abort: abort.signal,
    ...({} as Capabilities),
    incidents: { error: () => {} },
  }
  const input: LoopInput = {
    model,
    system: SYSTEM,
    compactionSystem: COMPACTION_SYSTEM,
    tools,
    rules: allowAll,
    log,
    context,
    maxSteps: 10,
    maxRetries: 0,
    usableTokens: 100_000,
    ...overrides,
  }
  return { model, log, abort, input }
}

/** All tool results in the log, in order. */
export function results(log: MemoryLog) {
  return log.records.flatMap((r) => (r.message.role === "tool" ? (r.message as ToolModelMessage).content : [])).flatMap((p) => (p.type === "tool-result" ? [p] : []))
}

export function promptTexts(c: ModelCall): Array<{ role: string; text: string }> {
  return c.prompt.filter((m) => m.role !== "system").map((m) => ({ role: m.role, text: messageText(m) }))
}
