/** The shortest prefix of an id a user may type: shorter ones match too much to be meant. */
export const MIN_PREFIX = 4

/**
 * The one id among `candidates` that `given` names: the id itself, or a unique prefix of at
 * least MIN_PREFIX characters (case-insensitive, as people retype ULIDs). Every place that
 * takes an id from a user or a model (/cancel, /pause, /resume, cancel_task, schedule's
 * triggerId) resolves it here, so they all accept and refuse the same things.
 */
export function resolveId(given: string, candidates: Iterable<string>, what = "task or schedule"): { id: string } | { error: string; unknown: boolean } {
  const wanted = given.trim()
  const ids = [...new Set(candidates)]
  if (ids.includes(wanted)) return { id: wanted }
  if (wanted.length < MIN_PREFIX) return { error: `"${wanted}" is too short: give at least ${MIN_PREFIX} characters of the ${what}'s id`, unknown: true }
  const upper = wanted.toUpperCase()
  const matches = ids.filter((id) => id.toUpperCase().startsWith(upper))
  if (matches.length === 1) return { id: matches[0]! }
  if (matches.length === 0) return { error: `no ${what} has an id starting with "${wanted}"`, unknown: true }
  return { error: `"${wanted}" is ambiguous: it starts ${matches.length} ids (${matches.slice(0, 5).join(", ")}${matches.length > 5 ? ", …" : ""}); give more characters`, unknown: false }
}
