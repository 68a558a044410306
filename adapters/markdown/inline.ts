export type Emphasis = "bold" | "italic" | "strike" | "code"

/**
 * Inline Markdown as a tree. A link is any well-formed `[label](url)`, safe or not: `source` is
 * the link as written, for a renderer that will not show it as a link.
 */
export type Inline = string | { emphasis: Emphasis; children: Inline[] } | { url: string; source: string; children: Inline[] }

const ESCAPABLE = /[!-/:-@[-`{-~]/
/** Where the next character that may start markup is. */
const SPECIAL = /[\\`[*_~]/g
const EMPHASIS: Record<string, Emphasis> = { "~~": "strike", "**": "bold", __: "bold", "*": "italic", _: "italic" }
const isSpace = (char: string | undefined) => char === undefined || /\s/.test(char)
const isWordChar = (char: string | undefined) => char !== undefined && /[\p{L}\p{N}]/u.test(char)

/**
 * How deep emphasis may nest. Deeper delimiters stay literal text, so the parse (and every walk
 * over its tree) recurses at most this deep whatever the input: thousands of nested `*`/`_`
 * cannot overflow the stack. Nobody nests emphasis this deep on purpose.
 */
export const MAX_INLINE_DEPTH = 16

export const parseInline = (text: string): Inline[] => new InlineParser(text).parse(0, text.length, false, 0)

/** All the text of `nodes`, markup dropped. */
export const textOf = (nodes: Inline[]): string => nodes.map((node) => (typeof node === "string" ? node : textOf(node.children))).join("")

function runEnd(s: string, i: number, end: number): number {
  let k = i
  while (k < end && s[k] === s[i]) k++
  return k
}

/**
 * Inline Markdown of one block. Nested elements are parsed as ranges of the same string,
 * so code spans and brackets are matched once up front and stray delimiters are looked
 * for once: input full of unmatched `*` or `` ` `` stays near linear.
 */
class InlineParser {
  /** Backtick run start → start of the next run of the same length, which closes its code span. */
  private readonly codeClose = new Map<number, number>()
  private readonly bracketClose = new Map<number, number>()
  /** `delimiter:end` → the first position from which no closer was found before `end`. */
  private readonly noCloser = new Map<string, number>()

  constructor(private readonly s: string) {
    const runs: [number, number][] = []
    for (let k = s.indexOf("`"); k >= 0; k = s.indexOf("`", k)) {
      const end = runEnd(s, k, s.length)
      runs.push([k, end - k])
      k = end
    }
    const following = new Map<number, number>()
    for (const [start, length] of runs.reverse()) {
      const close = following.get(length)
      if (close !== undefined) this.codeClose.set(start, close)
      following.set(length, start)
    }
    const open: number[] = []
    for (let k = 0; k < s.length; ) {
      const skipped = this.skipLiteral(k, s.length)
      if (skipped !== undefined) {
        k = skipped
        continue
      }
      if (s[k] === "[") open.push(k)
      if (s[k] === "]" && open.length > 0) this.bracketClose.set(open.pop()!, k)
      k++
    }
  }

  /** The nodes of `s[start, end)` at nesting `depth`; inside a link's label no other link starts. */
  parse(start: number, end: number, inLink: boolean, depth: number): Inline[] {
    const s = this.s
    const nodes: Inline[] = []
    let text = ""
    const push = (node: Inline) => {
      if (text) nodes.push(text)
      text = ""
      nodes.push(node)
    }
    let i = start
    while (i < end) {
      SPECIAL.lastIndex = i
      const next = Math.min(SPECIAL.exec(s)?.index ?? end, end)
      text += s.slice(i, next)
      i = next
      if (i >= end) break
      const char = s[i]
      if (char === "\\") {
        const escaped = i + 1 < end && ESCAPABLE.test(s[i + 1])
        text += escaped ? s[i + 1] : char
        i += escaped ? 2 : 1
      } else if (char === "`") {
        const after = this.skipLiteral(i, end)!
        const length = runEnd(s, i, end) - i
        if (after === i + length) {
          // The whole run is literal, so a shorter run inside it cannot open a span either.
          text += s.slice(i, after)
        } else {
          const code = s.slice(i + length, after - length)
          push({ emphasis: "code", children: [/^ .*[^ ].* $/s.test(code) ? code.slice(1, -1) : code] })
        }
        i = after
      } else if (char === "[") {
        const link = inLink || depth >= MAX_INLINE_DEPTH ? undefined : this.link(i, end, depth)
        if (link) push(link.node)
        else text += char
        i = link?.end ?? i + 1
      } else {
        const delimiter = i + 1 < end && s[i + 1] === char ? char + char : char
        const close = delimiter in EMPHASIS && depth < MAX_INLINE_DEPTH ? this.closerOf(i, end, delimiter) : -1
        if (close < 0) {
          // An unmatched `**` yields one literal `*`, so the second may still open italics.
          text += char
          i++
        } else {
          push({ emphasis: EMPHASIS[delimiter], children: this.parse(i + delimiter.length, close, inLink, depth + 1) })
          i = close + delimiter.length
        }
      }
    }
    if (text) nodes.push(text)
    return nodes
  }

  /** Skips a code span or an escape at `k`, since neither can hold markup; returns where to look next. */
  private skipLiteral(k: number, end: number): number | undefined {
    if (this.s[k] === "\\") return k + 2
    if (this.s[k] !== "`") return undefined
    const length = runEnd(this.s, k, end) - k
    const close = this.codeClose.get(k)
    return close !== undefined && close + length <= end ? close + length : k + length
  }

  /**
   * The closing delimiter for `delimiter` opened at `i`, or -1. Openers must be followed and
   * closers preceded by non-space, `_` must not sit inside a word (snake_case stays as is),
   * and a run of exactly two characters belongs to `**`/`__`, not to `*`/`_`.
   */
  private closerOf(i: number, end: number, delimiter: string): number {
    const s = this.s
    const char = delimiter[0]
    const from = i + delimiter.length
    if (from >= end || isSpace(s[from]) || (char === "_" && isWordChar(s[i - 1]))) return -1
    const key = `${delimiter}:${end}`
    if ((this.noCloser.get(key) ?? end) <= from) return -1
    for (let k = from; k < end; ) {
      // A link binds tighter than emphasis: a delimiter in its URL or label closes nothing outside it.
      const skipped = this.skipLiteral(k, end) ?? (s[k] === "[" ? this.linkSpan(k, end)?.end : undefined)
      if (skipped !== undefined) {
        k = skipped
        continue
      }
      if (s[k] !== char) {
        k++
        continue
      }
      const runStop = runEnd(s, k, end)
      const fits = delimiter.length === 2 ? runStop - k >= 2 : runStop - k !== 2
      if (fits && k > from && !isSpace(s[k - 1]) && !(char === "_" && isWordChar(s[runStop]))) return runStop - delimiter.length
      k = runStop
    }
    this.noCloser.set(key, from)
    return -1
  }

  /** `[label](url)` with a non-blank label and a URL without spaces; anything else that starts with `[` stays text. */
  private link(i: number, end: number, depth: number): { node: Inline; end: number } | undefined {
    const span = this.linkSpan(i, end)
    if (!span) return undefined
    const url = this.s.slice(span.labelEnd + 2, span.end - 1)
    return { node: { url, source: this.s.slice(i, span.end), children: this.parse(i + 1, span.labelEnd, true, depth + 1) }, end: span.end }
  }

  /** Where the link starting at `i` has its `]` and where it ends, if it is one. */
  private linkSpan(i: number, end: number): { labelEnd: number; end: number } | undefined {
    const s = this.s
    const k = this.bracketClose.get(i)
    if (k === undefined || k + 1 >= end || s[k + 1] !== "(") return undefined
    let m = k + 2
    for (let parens = 0; m < end && !isSpace(s[m]); m++) {
      if (s[m] === ")" && parens-- === 0) break
      if (s[m] === "(") parens++
    }
    if (m >= end || s[m] !== ")" || m === k + 2 || !s.slice(i + 1, k).trim()) return undefined
    return { labelEnd: k, end: m + 1 }
  }
}
