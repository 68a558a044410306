import { z } from "zod"
import type { Role, UserId } from "../core/types.ts"
import { merge, Ruleset, type Rule } from "./permission.ts"

/**
 * The role table: the one place that says which role may do what. Two parts:
 *
 * - `defaults`, the tool rules each role starts with (a permissions file adds rules after them);
 * - `RIGHTS`, what a role may do whatever the rules say: whom it hands work to, whether it
 *   shapes tasks, asks the user, creates schedules. A tool of a right the role lacks is never
 *   offered to it, and is refused should it be called anyway.
 *
 * Tools and the Supervisor ask this module (`delegateTarget`, `refusal`, `withheldTools`,
 * `mayReportTo`) instead of comparing role names themselves.
 */

const allow = (permission: string, pattern = "*"): Rule => ({ permission, pattern, action: "allow" })

// Deny first so that a tool added later is hidden from every role until a rule grants it.
const denyAll: Rule = { permission: "*", pattern: "*", action: "deny" }

/**
 * The default rules. delegate's pattern is its target: the teller may only hand work to the
 * planner, the planner to any worker type, and workers may not delegate at all, which keeps
 * the chain one level deep and the teller free of long-running work.
 */
export const defaults: Record<Role, Ruleset> = {
  teller: [denyAll, allow("delegate", "planner"), allow("reply"), allow("send_file"), allow("remember"), allow("forget"), allow("set_timezone"), allow("ask_user"), allow("list_tasks"), allow("cancel_task")],
  planner: [
    denyAll,
    allow("delegate"),
    allow("get_recent_history"),
    allow("get_history_by_time"),
    allow("search_memory"),
    allow("schedule"),
    allow("list_tasks"),
    allow("cancel_task"),
    allow("web_search"),
  ],
  worker: [denyAll, allow("fetch_url"), allow("read_file"), allow("write_file"), allow("list_files"), allow("web_search"), allow("send_file"), allow("read_resource")],
}

/** Extra rules per role, as read from PERMISSIONS_FILE. Strict so that a misspelt role fails loudly instead of granting nothing. */
export const Config = z.strictObject({ teller: Ruleset.optional(), planner: Ruleset.optional(), worker: Ruleset.optional() })
export type Config = z.infer<typeof Config>

/** Extra rules come after the defaults and after what the configuration grants (MCP tools to
 *  workers), so the operator's file has the last word. */
export function forRole(role: Role, extra?: Partial<Record<Role, Ruleset>>, granted: Ruleset = []): Ruleset {
  return merge(defaults[role], granted, extra?.[role] ?? [])
}

/** Throws a ZodError describing what is wrong with the file. */
export function parseConfig(json: unknown): Config {
  return Config.parse(json)
}

/** A right no permissions file grants or takes away. */
export type Right = "delegate" | "shape_tasks" | "ask_user" | "schedule"

interface RoleRights {
  /** Whom the role's delegate calls hand work to; absent: it may not delegate (no recursion). */
  delegatesTo?: "planner" | "worker"
  /** May set a delegated task's type, condition, priority and worker type. */
  shapesTasks: boolean
  asksUser: boolean
  schedules: boolean
}

const RIGHTS: Record<Role, RoleRights> = {
  teller: { delegatesTo: "planner", shapesTasks: false, asksUser: true, schedules: false },
  planner: { delegatesTo: "worker", shapesTasks: true, asksUser: false, schedules: true },
  worker: { shapesTasks: false, asksUser: false, schedules: false },
}

/** Why a role without the right is refused: the tool error the model reads. `detail` names
 *  what exactly was asked (the task fields set). */
const REFUSALS: Record<Right, (detail?: string) => string> = {
  delegate: () => "Workers cannot delegate: do the work yourself, or report what is missing.",
  shape_tasks: (fields = "type, condition, priority or worker") => `Only the Planner may set ${fields}; delegate with prompt (and timeout) only.`,
  ask_user: () => "Only the Teller asks the user.",
  schedule: () => "Only the Planner creates schedules; delegate the request to the Planner.",
}

/** The tool each right belongs to, hidden from a role that lacks the right. */
const TOOL_OF: Partial<Record<Right, string>> = { delegate: "delegate", ask_user: "ask_user", schedule: "schedule" }

function has(role: Role, right: Right): boolean {
  const rights = RIGHTS[role]
  switch (right) {
    case "delegate":
      return rights.delegatesTo !== undefined
    case "shape_tasks":
      return rights.shapesTasks
    case "ask_user":
      return rights.asksUser
    case "schedule":
      return rights.schedules
  }
}

/** The role a delegate call of `role` hands work to; undefined when it may not delegate. */
export function delegateTarget(role: Role): "planner" | "worker" | undefined {
  return RIGHTS[role].delegatesTo
}

/** undefined when `role` has the right; otherwise the refusal to give. */
export function refusal(role: Role, right: Right, detail?: string): string | undefined {
  return has(role, right) ? undefined : REFUSALS[right](detail)
}

/** Tools never offered to `role`, whatever its rules allow. */
export function withheldTools(role: Role): string[] {
  return (Object.keys(TOOL_OF) as Right[]).filter((right) => !has(role, right)).map((right) => TOOL_OF[right]!)
}

/** Where a user's schedules may report: an owner anywhere, anyone else only to a conversation
 *  of their own (`targetUser` is whose conversation the target is, if anyone's). */
export function mayReportTo(user: { id: UserId; owner: boolean }, targetUser: UserId | undefined): boolean {
  return user.owner || targetUser === user.id
}
