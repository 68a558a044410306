import type { ModelMessage, ToolCallPart } from "ai"
import type { Role } from "../tool/tool.ts"

/**
 * Whether the step that made `calls` ended the run once every call succeeded: nothing in their
 * results is for the model to read, so calling it again would only cost a call that answers
 * with nothing. The Teller's turn ends with a `reply` (a `delegate` beside it is reported on
 * later, when its results arrive); a Planner's run ends with a step that only stages workers
 * and schedules, which take effect when the run ends. A Worker's run ends with its report, in
 * text. (`ask_user` ends a run on its own, by waiting for the answer.)
 */
export function stepEndsRun(role: Role, calls: readonly ToolCallPart[], results: readonly ModelMessage[]): boolean {
  if (calls.length === 0) return false
  const failed = results.some((message) => message.role === "tool" && message.content.some((part) => part.type === "tool-result" && part.output.type.startsWith("error")))
  if (failed) return false
  const names = calls.map((call) => call.toolName)
  if (role === "teller") return names.includes("reply") && names.every((name) => name === "reply" || name === "delegate")
  if (role === "planner") return names.every((name) => name === "delegate" || name === "schedule")
  return false
}
