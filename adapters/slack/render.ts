/**
 * Model-written Markdown → Slack mrkdwn, split into message parts.
 *
 * Slack caps a section block's text at 3,000 characters (a message's `text` may be longer,
 * but a part that fits a section can carry buttons), so every part is at most SLACK_LIMIT
 * characters of mrkdwn. Cuts fall on a blank line, else a line end, else a space; formatting
 * cut by a split is closed and re-opened (a code block gets its fences on both sides), and a
 * link or an entity is never cut.
 */
export const SLACK_LIMIT = 3000

/** A link longer than this is shown as text (label and URL), so a link is never what does not fit. */
const MAX_LINK = 500
/** Room for a link plus the deepest stack of re-opened marks. */
const MIN_LIMIT = 2 * MAX_LINK

type Mark = { name: string; open: string; close: string }
const mark = (name: string, open: string, close = open): Mark => ({ name, open, close })
const BOLD = mark("bold", "*")
const ITALIC = mark("italic", "_")
const STRIKE = mark("strike", "~")
const CODE = mark("code", "`")
const PRE = mark("pre", "```\n", "\n```")
/** In a quote the fences share the lines of the code, since every line must start with "> ". */
const QUOTED_PRE = mark("pre", "```")
/** A quote is a prefix on each of its lines; re-opened after a cut it prefixes the first line. */
const QUOTE = mark("quote", "> ", "")
const ALL_MARKS = [BOLD, ITALIC, STRIKE, CODE, PRE, QUOTE].map((m) => m.name)

/** One character of text (escaped), a whole link, or a mark; cuts fall only between atoms. */
type Atom = { out: string; text: string; open?: Mark; close?: Mark }

const ESCAPED: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;" }
export const escapeMrkdwn = (text: string) => text.replace(/[&<>]/g, (char) => ESCAPED[char])

export function renderSlack(markdown: string, limit = SLACK_LIMIT): string[] {
  if (limit < MIN_LIMIT) throw new RangeError(`limit must be at least ${MIN_LIMIT}, got ${limit}`)
  const atoms = new Atoms()
  atoms.blocks(parseBlocks(markdown.replace(/\r\n?/g, "\n").split("\n")))
  return split(atoms.list, limit)
}

// ── blocks ────────────────────────────────────────────────────────────────────────────

type Block = { gap: boolean } & (
  | { kind: "paragraph"; text: string }
  | { kind: "heading"; text: string }
  | { kind: "item"; indent: string; marker: string; text: string }
  | { kind: "code"; code: string }
  | { kind: "quote"; blocks: Block[] }
)

const FENCE = /^(\s*)(`{3,}|~{3,})(.*)$/
const HEADING = /^ {0,3}#{1,6}(?:[ \t]+(.*))?$/
const QUOTE_LINE = /^ {0,3}>/
const ITEM = /^(\s*)([-*+]|\d{1,9}[.)])[ \t]+(.*)$/

function fenceOf(line: string): { indent: number; marker: string } | undefined {
  const match = FENCE.exec(line)
  // A backtick "fence" with backticks after it is an inline code span, as in CommonMark.
  if (!match || (match[2][0] === "`" && match[3].includes("`"))) return undefined
  return { indent: match[1].length, marker: match[2] }
}

const startsBlock = (line: string) => fenceOf(line) !== undefined || HEADING.test(line) || QUOTE_LINE.test(line) || ITEM.test(line)

function parseBlocks(lines: string[]): Block[] {
  const blocks: Block[] = []
  let gap = false
  const push = (block: Block) => {
    blocks.push(block)
    gap = false
  }
  for (let i = 0; i < lines.length; ) {
    const line = lines[i]
    if (!line.trim()) {
      gap = true
      i++
      continue
    }
    const fence = fenceOf(line)
    if (fence) {
      const closing = new RegExp(`^\\s*${fence.marker[0]}{${fence.marker.length},}\\s*$`)
      // Models indent fences inside list items; strip that indent from the code, no more.
      const indent = new RegExp(`^[ \\t]{0,${fence.indent}}`)
      const body: string[] = []
      for (i++; i < lines.length && !closing.test(lines[i]); i++) body.push(lines[i].replace(indent, ""))
      i++
      const code = body.join("\n")
      if (code.trim()) push({ kind: "code", code, gap })
      continue
    }
    const heading = HEADING.exec(line)
    if (heading) {
      const text = (heading[1] ?? "").replace(/[ \t]+#+[ \t]*$/, "").trim()
      if (text) push({ kind: "heading", text, gap })
      i++
      continue
    }
    if (QUOTE_LINE.test(line)) {
      const inner: string[] = []
      for (; i < lines.length && QUOTE_LINE.test(lines[i]); i++) inner.push(lines[i].replace(/^ {0,3}> ?/, ""))
      const nested = parseBlocks(inner)
      if (nested.length > 0) push({ kind: "quote", blocks: nested, gap })
      continue
    }
    const item = ITEM.exec(line)
    const text = [item ? item[3] : line.trimStart()]
    // Lines that start no block of their own continue the paragraph or list item above them.
    for (i++; i < lines.length && lines[i].trim() && !startsBlock(lines[i]); i++) text.push(item ? lines[i] : lines[i].trimStart())
    const joined = text.join("\n").trimEnd()
    push(item ? { kind: "item", indent: item[1], marker: item[2], text: joined, gap } : { kind: "paragraph", text: joined, gap })
  }
  return blocks
}

// ── atoms ─────────────────────────────────────────────────────────────────────────────

const isBullet = (marker: string) => /^[-*+]$/.test(marker)

class Atoms {
  readonly list: Atom[] = []
  private quoted = false

  blocks(blocks: Block[]): void {
    blocks.forEach((block, n) => {
      // A blank line in the source stays a blank line; adjacent blocks stay on adjacent lines.
      if (n > 0) this.text(block.gap ? "\n\n" : "\n")
      switch (block.kind) {
        case "paragraph":
          return this.inline(block.text, new Set())
        case "heading":
          // Slack has no headings: a bold line, without bold nested in it.
          return this.wrap(BOLD, new Set(), (active) => this.inline(block.text, active))
        case "item":
          // `*` or `-` at a line start reads as markup in mrkdwn; a bullet reads as a list.
          this.text(`${block.indent}${isBullet(block.marker) ? "•" : block.marker} `)
          return this.inline(block.text, new Set())
        case "code":
          return this.wrap(this.quoted ? QUOTED_PRE : PRE, new Set(), () => this.text(block.code))
        case "quote":
          if (this.quoted) return this.blocks(block.blocks)
          this.quoted = true
          this.wrap(QUOTE, new Set(), () => this.blocks(block.blocks))
          this.quoted = false
      }
    })
  }

  /** Text as it should read: escaped, each line of a quote prefixed again. */
  text(value: string): void {
    for (const char of value) this.list.push({ out: char === "\n" && this.quoted ? "\n> " : (ESCAPED[char] ?? char), text: char })
  }

  /** `body` inside `m`, unless `m` is already open: mrkdwn cannot nest a mark in itself. */
  wrap(m: Mark, active: ReadonlySet<string>, body: (active: ReadonlySet<string>) => void): void {
    if (active.has(m.name)) return body(active)
    this.list.push({ out: m.open, text: "", open: m })
    body(new Set([...active, m.name]))
    this.list.push({ out: m.close, text: "", close: m })
  }

  link(url: string, label: string): void {
    const out = `<${url.replace(/[&<>|]/g, (char) => (char === "&" ? "&amp;" : encodeURIComponent(char)))}|${escapeMrkdwn(label)}>`
    if (out.length > MAX_LINK) return this.text(`${label} (${url})`)
    this.list.push({ out, text: label })
  }

  inline(text: string, active: ReadonlySet<string>): void {
    new InlineParser(text, this).parse(0, text.length, active)
  }
}

// ── inline ────────────────────────────────────────────────────────────────────────────

const ESCAPABLE = /[!-/:-@[-`{-~]/
const SAFE_URL = /^(?:https?:\/\/|mailto:)[^\s\x00-\x1f\x7f]+$/i
const SPECIAL = /[\\`[*_~]/g
const EMPHASIS: Record<string, Mark> = { "~~": STRIKE, "**": BOLD, __: BOLD, "*": ITALIC, _: ITALIC }
const isSpace = (char: string | undefined) => char === undefined || /\s/.test(char)
const isWordChar = (char: string | undefined) => char !== undefined && /[\p{L}\p{N}]/u.test(char)

function runEnd(s: string, i: number, end: number): number {
  let k = i
  while (k < end && s[k] === s[i]) k++
  return k
}

/**
 * The inline Markdown of one block, emitted as atoms. Code spans and brackets are matched once
 * up front, and a delimiter with no closer is remembered, so input full of unmatched `*` or
 * `` ` `` stays near linear.
 */
class InlineParser {
  /** Backtick run start → start of the next run of the same length, which closes its code span. */
  private readonly codeClose = new Map<number, number>()
  private readonly bracketClose = new Map<number, number>()
  /** `delimiter:end` → the first position from which no closer was found before `end`. */
  private readonly noCloser = new Map<string, number>()

  constructor(
    private readonly s: string,
    private readonly atoms: Atoms,
  ) {
    const following = new Map<number, number>()
    const runs: [number, number][] = []
    for (let k = s.indexOf("`"); k >= 0; k = s.indexOf("`", k)) {
      const end = runEnd(s, k, s.length)
      runs.push([k, end - k])
      k = end
    }
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

  parse(start: number, end: number, active: ReadonlySet<string>): void {
    const s = this.s
    for (let i = start; i < end; ) {
      SPECIAL.lastIndex = i
      const next = Math.min(SPECIAL.exec(s)?.index ?? end, end)
      this.atoms.text(s.slice(i, next))
      i = next
      if (i >= end) return
      const char = s[i]
      if (char === "\\") {
        const escaped = i + 1 < end && ESCAPABLE.test(s[i + 1])
        this.atoms.text(escaped ? s[i + 1] : char)
        i += escaped ? 2 : 1
      } else if (char === "`") {
        const after = this.skipLiteral(i, end)!
        const length = runEnd(s, i, end) - i
        if (after === i + length) this.atoms.text(s.slice(i, after))
        else {
          const code = s.slice(i + length, after - length)
          this.atoms.wrap(CODE, active, () => this.atoms.text(/^ .*[^ ].* $/s.test(code) ? code.slice(1, -1) : code))
        }
        i = after
      } else if (char === "[") {
        i = active.has("link") ? this.literal(i) : this.link(i, end, active)
      } else {
        const delimiter = i + 1 < end && s[i + 1] === char ? char + char : char
        const close = delimiter in EMPHASIS ? this.closerOf(i, end, delimiter) : -1
        if (close < 0) {
          // An unmatched `**` yields one literal `*`, so the second may still open italics.
          i = this.literal(i)
          continue
        }
        this.atoms.wrap(EMPHASIS[delimiter], active, (inner) => this.parse(i + delimiter.length, close, inner))
        i = close + delimiter.length
      }
    }
  }

  private literal(i: number): number {
    this.atoms.text(this.s[i])
    return i + 1
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
      const skipped = this.skipLiteral(k, end)
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

  /** `[label](url)` as one link atom; anything else that starts with `[` stays text. */
  private link(i: number, end: number, active: ReadonlySet<string>): number {
    const s = this.s
    const k = this.bracketClose.get(i)
    if (k === undefined || k + 1 >= end || s[k + 1] !== "(") return this.literal(i)
    let m = k + 2
    for (let depth = 0; m < end && !isSpace(s[m]); m++) {
      if (s[m] === ")" && depth-- === 0) break
      if (s[m] === "(") depth++
    }
    const url = s.slice(k + 2, m)
    if (m >= end || s[m] !== ")" || !url || !s.slice(i + 1, k).trim()) return this.literal(i)
    // Unsafe schemes (javascript:, data:) are shown as written.
    if (!SAFE_URL.test(url)) {
      this.atoms.text(s.slice(i, m + 1))
      return m + 1
    }
    // Slack shows a link's label as plain text: the label's own markup is dropped.
    const label = new Atoms()
    new InlineParser(s, label).parse(i + 1, k, new Set([...active, ...ALL_MARKS, "link"]))
    this.atoms.link(url, label.list.map((atom) => atom.text).join("").replace(/\s+/g, " "))
    return m + 1
  }
}

// ── splitting ─────────────────────────────────────────────────────────────────────────

/** How good a cut after `atoms[at - 1]` is: 3 after a blank line, 2 after a line, 1 after a space, 0 anywhere else. */
function priority(atoms: Atom[], at: number): number {
  const previous = atoms[at - 1].text
  if (previous === "\n") return atoms[at - 2]?.text === "\n" ? 3 : 2
  return previous === " " || previous === "\t" ? 1 : 0
}

/** The end of the part starting at `start`: the best cut among those whose mrkdwn, closers included, fits. */
function cutOf(atoms: Atom[], start: number, open: readonly Mark[], limit: number): number {
  let length = open.reduce((sum, m) => sum + m.open.length, 0)
  let closing = open.reduce((sum, m) => sum + m.close.length, 0)
  const best = [-1, -1, -1, -1]
  for (let i = start; i < atoms.length; i++) {
    const atom = atoms[i]
    length += atom.out.length
    if (atom.open) closing += atom.open.close.length
    if (atom.close) closing -= atom.close.close.length
    // MIN_LIMIT guarantees room for the re-opened marks and one atom, so some cut exists.
    if (length + closing > limit) return best.findLast((cut) => cut >= 0)!
    best[priority(atoms, i + 1)] = i + 1
  }
  return atoms.length
}

function split(atoms: Atom[], limit: number): string[] {
  const parts: string[] = []
  let open: Mark[] = []
  let start = 0
  for (;;) {
    // Skip what would only start a part with blank space or a mark that closes at once;
    // inside a code block only line breaks, so the first line keeps its indentation.
    const blank = open.some((m) => m.name === PRE.name) ? /^\n$/ : /^\s$/
    for (; start < atoms.length && (atoms[start].close || blank.test(atoms[start].text)); start++) {
      if (atoms[start].close) open = open.slice(0, -1)
    }
    if (start >= atoms.length) return parts
    let body = atoms.slice(start, cutOf(atoms, start, open, limit))
    const lastText = body.findLastIndex((atom) => /\S/.test(atom.text))
    // A part that would end just inside a mark leaves that mark to the next part.
    const dangling = body.findIndex((atom, n) => n > lastText && atom.open)
    if (lastText >= 0 && dangling >= 0) body = body.slice(0, dangling)
    // Trailing blank space is dropped: Slack trims it anyway, and a closer must follow text.
    const kept = body.filter((atom, n) => n <= lastText || atom.open || atom.close)
    const prefix = open.map((m) => m.open).join("")
    for (const atom of body) {
      if (atom.open) open = [...open, atom.open]
      if (atom.close) open = open.slice(0, -1)
    }
    const text = kept.map((atom) => atom.text).join("")
    if (text.trim()) parts.push(prefix + kept.map((atom) => atom.out).join("") + open.map((m) => m.close).reverse().join(""))
    start += body.length
  }
}
