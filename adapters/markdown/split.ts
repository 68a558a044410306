import type { Atom, Wrapper } from "./writer.ts"

/** One message's worth of output: `out` in the dialect, `text` what it reads as. */
export type Part = { out: string; text: string }

/**
 * Cuts atoms into parts of at most `limit` characters of output, closers included: on a blank
 * line, else a line end, else a space, else anywhere between atoms. Elements cut by a split
 * are closed at the end of a part and re-opened at the start of the next. `limit` must leave
 * room for the deepest stack of re-opened elements plus one atom.
 */
export function split(atoms: Atom[], limit: number): Part[] {
  const parts: Part[] = []
  let open: Wrapper[] = []
  let start = 0
  for (;;) {
    // Skip what would only start a part with blank space or an element that closes at once;
    // inside a code block only line breaks, so the first line keeps its indentation.
    const blank = open.some((wrapper) => wrapper.name === "pre") ? /^\n$/ : /^\s$/
    for (; start < atoms.length && (atoms[start].close || blank.test(atoms[start].text)); start++) {
      if (atoms[start].close) open = open.slice(0, -1)
    }
    if (start >= atoms.length) return parts
    let body = atoms.slice(start, cutOf(atoms, start, open, limit))
    const lastText = body.findLastIndex((atom) => /\S/.test(atom.text))
    // A part that would end just inside an element leaves that element to the next part.
    const dangling = body.findIndex((atom, n) => n > lastText && atom.open)
    if (lastText >= 0 && dangling >= 0) body = body.slice(0, dangling)
    // Trailing blank space is dropped: the platforms trim it anyway, and in mrkdwn a closer must follow text.
    const kept = body.filter((atom, n) => n <= lastText || atom.open || atom.close)
    const prefix = open.map((wrapper) => wrapper.open).join("")
    for (const atom of body) {
      if (atom.open) open = [...open, atom.open]
      if (atom.close) open = open.slice(0, -1)
    }
    const text = kept.map((atom) => atom.text).join("")
    const out = prefix + kept.map((atom) => atom.out).join("") + open.map((wrapper) => wrapper.close).reverse().join("")
    if (text.trim()) parts.push({ out, text })
    start += body.length
  }
}

/** How good a cut after `atoms[at - 1]` is: 3 after a blank line, 2 after a line, 1 after a space, 0 anywhere else. */
function priority(atoms: Atom[], at: number): number {
  const previous = atoms[at - 1].text
  if (previous === "\n") return atoms[at - 2]?.text === "\n" ? 3 : 2
  return previous === " " || previous === "\t" ? 1 : 0
}

/** The end of the part starting at `start`: the best cut among those whose output, closers included, fits. */
function cutOf(atoms: Atom[], start: number, open: readonly Wrapper[], limit: number): number {
  let length = open.reduce((sum, wrapper) => sum + wrapper.open.length, 0)
  let closing = open.reduce((sum, wrapper) => sum + wrapper.close.length, 0)
  const best = [-1, -1, -1, -1]
  for (let i = start; i < atoms.length; i++) {
    const atom = atoms[i]
    length += atom.out.length
    if (atom.open) closing += atom.open.close.length
    if (atom.close) closing -= atom.close.close.length
    // The caller's minimum limit guarantees room for the re-opened elements and one atom, so some cut exists.
    if (length + closing > limit) return best.findLast((cut) => cut >= 0)!
    best[priority(atoms, i + 1)] = i + 1
  }
  return atoms.length
}

/**
 * Plain text as parts of at most `limit` units once each character is written with `write`: what
 * a renderer falls back to when it fails. A part ends after its last whitespace if that keeps it
 * at least half full, else between any two characters (never inside a surrogate pair).
 */
export function splitPlain(text: string, limit: number, write: (char: string) => string): Part[] {
  const chars = [...text]
  const parts: Part[] = []
  for (let start = 0; start < chars.length; ) {
    let length = 0
    let end = start
    let space = -1
    for (; end < chars.length; end++) {
      const out = write(chars[end]).length
      if (length + out > limit) break
      length += out
      if (/\s/.test(chars[end])) space = end + 1
    }
    const stop = end === chars.length || space - start < (end - start) / 2 ? Math.max(end, start + 1) : space
    const piece = chars.slice(start, stop)
    if (piece.join("").trim()) parts.push({ out: piece.map(write).join(""), text: piece.join("") })
    start = stop
  }
  return parts
}
