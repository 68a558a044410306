import { evaluate, type Rule, type Ruleset } from "../permission/permission.ts"
import type { MessageRecord } from "../store/records.ts"
import type { ToolContext, ToolDefinition } from "../tool/tool.ts"
import { holdsUntrusted, untrusted } from "./envelope.ts"

/**
 * Taint: a run whose session has read untrusted content (an envelope, see envelope.ts) may be
 * steered by it. There the calls that move data out or change what lasts — each tool says which
 * of its calls do (`ToolDefinition.guardedWhenTainted`) — go through the permission rules of
 * `tainted:<tool>` instead of the tool's own "allow": with no such rule the user is asked; an
 * owner relaxes it per tool and pattern in PERMISSIONS_FILE (OWASP LLM06, excessive agency).
 */

/** Rules about tainted calls are named `tainted:<tool id>`. */
export const TAINTED = "tainted:"

/** What each record read: computed once per record, since a session is read again at every call. */
const readsUntrusted = new WeakMap<MessageRecord, boolean>()

/** The session has read untrusted content that the model still sees: a tool result or an input
 *  (a task report, a tainted task's prompt) holding an envelope, since the newest compaction
 *  summary — or that summary itself, when it was written from tainted history (compact() puts
 *  it in an envelope then). A user's new message does not end the taint: what steered the run
 *  is still in the history the next turn is given, and so is what the model wrote after
 *  reading it. `/new` (a new session) does. Read from the log alone, so a run resumed after a
 *  crash is tainted alike. */
export function tainted(records: readonly MessageRecord[]): boolean {
  for (let i = records.length - 1; i >= 0; i--) {
    const record = records[i]!
    let reads = readsUntrusted.get(record)
    if (reads === undefined) {
      reads = isRead(record) && holdsUntrusted(typeof record.message.content === "string" ? record.message.content : JSON.stringify(record.message.content))
      readsUntrusted.set(record, reads)
    }
    if (reads) return true
    if (record.kind === "summary") return false
  }
  return false
}

/** A task a tainted run writes starts tainted: what steered the writer may have steered the
 *  prompt, so the task's own run asks before the same calls. The note rides in the prompt,
 *  which the task's session records, so the taint survives restarts and other processes. */
export function taintedPrompt(prompt: string): string {
  return `${prompt}\n\n${untrusted("the run that wrote this task", "That run had read outside content before writing this task.")}`
}

/** What the model was given to read, not what it wrote itself; a compaction summary stands for
 *  everything it replaced. */
const isRead = (record: MessageRecord) => record.message.role === "tool" || record.message.role === "user" || record.kind === "summary"

/** The rule for a call the tool's own rule allows: its `tainted:` rule when the run is tainted
 *  and the tool guards this call, else undefined (the tool's rule stands). */
export async function taintedRule(def: ToolDefinition, args: unknown, pattern: string, ctx: ToolContext, rules: Ruleset, records: readonly MessageRecord[]): Promise<Rule | undefined> {
  const guard = def.guardedWhenTainted
  if (!guard || !tainted(records)) return undefined
  if (guard !== true && !(await guard(args as never, ctx, records))) return undefined
  // Only rules written for tainted calls count: the roles' blanket "*" deny or allow is about the tool.
  return evaluate(`${TAINTED}${def.id}`, pattern, rules.filter((rule) => rule.permission.startsWith(TAINTED)))
}
