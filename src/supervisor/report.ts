import type { TaskRecord } from "../core/types.ts"
import { defused, isEnvelope, untrusted, unwrapped } from "../trust/envelope.ts"

/**
 * What a Planner's or Worker's run hands back, as its task's result. A run that read outside
 * content may have been steered by it: its text comes in an envelope (trust/envelope.ts), and
 * so taints whoever reads it. A run that read nothing from outside wrote from its prompt alone,
 * which is no more outside content than the prompt was: its text is only defused, so it cannot
 * forge the report's structure, and reading it taints no one.
 */
export function taskReport(agent: string, text: string, tainted: boolean): string {
  return tainted ? untrusted(`${agent} report`, text) : defused(text)
}

/**
 * What the Teller is woken with when a batch ends: every task's id, status and result, and
 * its session id (seed 000's <task_metadata>) so the work can be continued with session_id.
 * A result is in an envelope when its run read outside content (taskReport); nothing in it — nor
 * in a model-written prompt — can close the report or forge a task.
 */
export function reportText(batch: readonly TaskRecord[]): string {
  const tasks = batch.map((task) =>
    [
      `<task id="${task.id}" agent="${task.agent}" status="${task.status}">`,
      `Prompt: ${defused(task.prompt)}`,
      task.status === "completed" ? resultText(task.result) : `Error: ${defused(task.error ?? task.status)}`,
      "<task_metadata>",
      `session_id: ${task.sessionId}`,
      "</task_metadata>",
      "</task>",
    ].join("\n"),
  )
  const results = ["<task-results>", ...tasks, "</task-results>"]
  // Seed 001: after a command's subtask, a synthetic message asks the model to carry on.
  if (batch[0]?.command) results.push("", `(The user ran ${batch[0].command}.) Summarize the task tool output above and continue with your task.`)
  // A scheduled run's report is written for the user by the Teller, not pasted.
  const firing = batch[0]?.firingId
  if (firing) results.push("", `(A scheduled run of schedule ${firing.split("/")[0]} ended. Tell the user what it found with reply, in your own words and in this conversation's context; do not paste the raw report.)`)
  return results.join("\n")
}

/** A task's result as taskReport made it; a result recorded without its markers (an empty one)
 *  is defused, so it cannot pose as an envelope or close the report either. */
function resultText(result: string | undefined): string {
  if (!result) return "(no output)"
  return isEnvelope(result) ? result : defused(result)
}

/**
 * A report as the user reads it, for when the Teller could not relay it (its turn failed, or it
 * said nothing about a scheduled run): each task's status and result, without the markup
 * meant for the model.
 */
export function readableReport(report: string): string {
  return unwrapped(report)
    .replace(/<task_metadata>[\s\S]*?<\/task_metadata>\n?/g, "")
    .replace(/<task id="([^"]*)" agent="([^"]*)" status="([^"]*)">\n/g, "\n*Task $1* ($2): $3\n")
    .replace(/<\/?task(-results)?>\n?/g, "")
    .replace(/\n\(The user ran [^\n]*$/, "")
    .replace(/\n\(A scheduled run of schedule [^\n]*$/, "")
    .trim()
}
