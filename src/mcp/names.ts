/** What model providers accept as a tool name (OpenAI's rule, the strictest of them). */
export const TOOL_NAME_MAX = 64
/** Leaves a tool name at least 31 characters after `<server>_`. */
export const SERVER_NAME_MAX = 32

/** Any character a provider would reject becomes "_". */
export function sanitise(name: string): string {
  const clean = name.replace(/[^A-Za-z0-9_-]/g, "_")
  return clean === "" ? "_" : clean
}

/**
 * `<server>_<tool>`, sanitised, at most 64 characters, and not one of `taken`: a name that
 * clashes (two long names cut to the same prefix, or `a` + `b_c` against `a_b` + `c`) gets a
 * numbered suffix.
 */
export function toolName(server: string, tool: string, taken: ReadonlySet<string>): string {
  const base = `${server}_${sanitise(tool)}`.slice(0, TOOL_NAME_MAX)
  if (!taken.has(base)) return base
  for (let n = 2; ; n++) {
    const suffix = `_${n}`
    const candidate = base.slice(0, TOOL_NAME_MAX - suffix.length) + suffix
    if (!taken.has(candidate)) return candidate
  }
}
