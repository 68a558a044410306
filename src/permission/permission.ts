import { z } from "zod"
import { match } from "./wildcard.ts"

export { match }

export const Action = z.enum(["allow", "deny", "ask"])
export type Action = z.infer<typeof Action>

/** `permission` matches the tool id, `pattern` the value the tool reports for the call (a path, a URL, a worker type). */
export const Rule = z.object({ permission: z.string().min(1), pattern: z.string().min(1), action: Action })
export type Rule = z.infer<typeof Rule>
export const Ruleset = z.array(Rule)
export type Ruleset = Rule[]

export type Role = "teller" | "planner" | "worker"

/** Order is the whole precedence model: later rules override earlier ones, so no specificity ranking is needed. */
export function merge(...rulesets: Ruleset[]): Ruleset {
  return rulesets.flat()
}

/** The last rule matching both the permission and the pattern decides; with none, a human is asked. */
export function evaluate(permission: string, pattern: string, ...rulesets: Ruleset[]): Rule {
  const rule = merge(...rulesets).findLast((r) => match(permission, r.permission) && match(pattern, r.pattern))
  return rule ?? { permission, pattern: "*", action: "ask" }
}

/**
 * Tools never to offer the model. Only a blanket deny (pattern "*") as the last word on a
 * tool hides it: a tool denied just for some values stays offered and is refused per call by
 * evaluate(), since hiding it would also take away the values that are allowed.
 */
export function disabled(tools: string[], ruleset: Ruleset): Set<string> {
  const result = new Set<string>()
  for (const tool of tools) {
    const rule = ruleset.findLast((r) => match(tool, r.permission))
    if (rule?.pattern === "*" && rule.action === "deny") result.add(tool)
  }
  return result
}

const allow = (permission: string, pattern = "*"): Rule => ({ permission, pattern, action: "allow" })

// Deny first so that a tool added later is hidden from every role until a rule grants it.
const denyAll: Rule = { permission: "*", pattern: "*", action: "deny" }

/**
 * The role table. delegate's pattern is its target: the teller may only hand work to the
 * planner, the planner to any worker type, and workers may not delegate at all, which keeps
 * the chain one level deep and the teller free of long-running work.
 */
export const defaults: Record<Role, Ruleset> = {
  teller: [denyAll, allow("delegate", "planner"), allow("reply"), allow("remember"), allow("ask_user"), allow("list_tasks"), allow("cancel_task")],
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
  worker: [denyAll, allow("fetch_url"), allow("read_file"), allow("write_file"), allow("list_files"), allow("web_search")],
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
