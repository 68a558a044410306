import { z } from "zod"

export const Rule = z.object({ permission: z.string().min(1), pattern: z.string().min(1), action: z.enum(["allow", "deny", "ask"]) })
export type Rule = z.infer<typeof Rule>
export const Ruleset = z.array(Rule)
export type Ruleset = Rule[]
type Role = "teller" | "planner" | "worker"

export function match(value: string, pattern: string): boolean {
  const source = pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".")
  return new RegExp(`^${source}$`, "s").test(value)
}

export function merge(...rulesets: Ruleset[]): Ruleset {
  return rulesets.flat()
}

export function evaluate(permission: string, pattern: string, ...rulesets: Ruleset[]): Rule {
  const rule = merge(...rulesets).findLast((r) => match(permission, r.permission) && match(pattern, r.pattern))
  return rule ?? { permission, pattern: "*", action: "ask" }
}

export function disabled(tools: string[], ruleset: Ruleset): Set<string> {
  const result = new Set<string>()
  for (const tool of tools) {
    const rule = ruleset.findLast((r) => match(tool, r.permission))
    if (rule && rule.pattern === "*" && rule.action === "deny") result.add(tool)
  }
  return result
}

const allow = (permission: string, pattern = "*"): Rule => ({ permission, pattern, action: "allow" })
const denyAll: Rule = { permission: "*", pattern: "*", action: "deny" }

export const defaults: Record<Role, Ruleset> = {
  teller: [denyAll, allow("delegate", "planner"), allow("reply"), allow("remember"), allow("ask_user"), allow("list_tasks"), allow("cancel_task")],
  planner: [denyAll, allow("delegate"), allow("get_recent_history"), allow("get_history_by_time"), allow("search_memory"), allow("schedule"), allow("list_tasks"), allow("cancel_task")],
  worker: [denyAll, allow("fetch_url"), allow("read_file"), allow("write_file"), allow("list_files")],
}

export const Config = z.object({ teller: Ruleset.optional(), planner: Ruleset.optional(), worker: Ruleset.optional() }).strict()
export type Config = z.infer<typeof Config>

export function forRole(role: Role, extra?: Config): Ruleset {
  return merge(defaults[role], extra?.[role] ?? [])
}

export function parseConfig(json: unknown): Config {
  return Config.parse(json)
}
