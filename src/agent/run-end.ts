import type { ModelMessage } from "ai"
import type { Role } from "../core/types.ts"
import { textOf, toolCalls } from "./messages.ts"

/**
 * Whether the step `assistant` ended the run once every call succeeded: nothing in the results
 * is for the model to read, so calling it again would only cost a call that answers with
 * nothing. The Teller's turn ends with a `reply` (a `delegate` beside it is reported on later,
 * when its results arrive). A Planner's run ends with a step that only stages workers and
 * schedules and says its final text beside them — without that text it may still need a
 * result, such as a task id to make another task wait for. A Worker's run ends with its
 * report, in text. (`ask_user` ends a run on its own, by waiting for the answer.)
 */
export function stepEndsRun(role: Role, assistant: ModelMessage, results: readonly ModelMessage[]): boolean {
  const calls = toolCalls(assistant)
  if (calls.length === 0) return false
  const failed = results.some((message) => message.role === "tool" && message.content.some((part) => part.type === "tool-result" && part.output.type.startsWith("error")))
  if (failed) return false
  const names = calls.map((call) => call.toolName)
  if (role === "teller") return names.includes("reply") && names.every((name) => name === "reply" || name === "delegate")
  if (role === "planner") return textOf(assistant) !== "" && names.every((name) => name === "delegate" || name === "schedule")
  return false
}
