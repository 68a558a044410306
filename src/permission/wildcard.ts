// Wildcard patterns as OpenCode's permission rules use them: deliberately not globs, so a
// rule written for a URL, a path or a shell-like command reads the same way everywhere.

const SYNTAX = /[\\^$.*+?()[\]{}|]/

/**
 * `*` is any run of characters, `/` and the empty run included; `?` is exactly one
 * character; everything else is literal. The whole value must match.
 *
 * A pattern ending in " *" also matches the value without that tail, so "git *" covers a
 * bare "git" while still refusing "gitk", which "git*" would let through.
 */
export function match(value: string, pattern: string): boolean {
  let source = ""
  // for..of walks code points, so `?` stands for one emoji rather than half a surrogate pair.
  for (const char of pattern) {
    if (char === "*") source += ".*"
    else if (char === "?") source += "."
    else source += SYNTAX.test(char) ? `\\${char}` : char
  }
  if (source.endsWith(" .*")) source = `${source.slice(0, -3)}( .*)?`
  // Dotall: values such as fetched URLs or written contents may span lines, and `*` must not stop at a newline.
  return new RegExp(`^${source}$`, "su").test(value)
}
