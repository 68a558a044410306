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
