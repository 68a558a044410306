import { generateText, type LanguageModel, type LanguageModelUsage, type ToolCallPart } from "ai"
import type { ToolSummary } from "../core/types.ts"
import { evaluate, type Ruleset } from "../permission/permission.ts"
import type { CallCapabilities, CompletionRequest, CompletionResult } from "../tool/capabilities.ts"
import type { ToolContext } from "../tool/tool.ts"
import { modelName } from "./request.ts"

/** What of a run one call's capabilities need (a part of the loop's input). */
export interface CallRun {
  model: LanguageModel
  rules: Ruleset
  maxRetries: number
  context: Omit<ToolContext, "callId">
  onTool?: (summary: ToolSummary) => void
  /** The usage of a model call made for the tool (sampling), counted as the run's own. */
  onCallUsage: (usage: LanguageModelUsage) => void
  /** Before that call, as before the run's own (a quota). */
  beforeCall?: () => Promise<void>
}

/**
 * The context one tool call runs with: the run's caller and capabilities, and what the call may
 * ask of the run — its live status, the run's rules for a permission that is not a tool, and a
 * completion from the run's model.
 */
export function callContext(run: CallRun, call: ToolCallPart, running: ToolSummary, fresh: boolean): ToolContext {
  const ctx: ToolContext = { ...run.context, callId: call.toolCallId, fresh: fresh || undefined }
  const capabilities: CallCapabilities = {
    progress: (text) => run.onTool?.({ ...running, title: `${running.title ?? running.tool} — ${text}` }),
    permit: async (permission, pattern) => {
      const rule = evaluate(permission, pattern, run.rules)
      if (rule.action !== "ask") return rule.action === "allow"
      return run.context.questions.approve(ctx, permission, pattern)
    },
    complete: (request) => complete(run, request),
  }
  return Object.assign(ctx, capabilities)
}

async function complete(run: CallRun, request: CompletionRequest): Promise<CompletionResult> {
  await run.beforeCall?.()
  const result = await generateText({
    model: run.model,
    system: request.system,
    messages: request.messages,
    maxOutputTokens: request.maxOutputTokens,
    temperature: request.temperature,
    stopSequences: request.stopSequences,
    maxRetries: run.maxRetries,
    abortSignal: run.context.abort,
  })
  run.onCallUsage(result.usage)
  return { text: result.text, model: modelName(run.model), finishReason: result.finishReason }
}
