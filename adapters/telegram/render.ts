/** One Telegram message of a rendered reply: `html` for parse_mode HTML, `plain` for when Telegram rejects it. */
export type Chunk = { html: string; plain: string }

/** Telegram's message limit. Telegram counts the text after parsing; we bound the HTML itself, which is never shorter. */
export const TELEGRAM_LIMIT = 4096

/**
 * The smallest `limit` that always fits the deepest stack of re-opened tags plus one character:
 * a link tag may take half the limit (longer ones are shown as text) and the other tags ~70 units.
 */
const MIN_LIMIT = 512

type Tag = { name: string; open: string; close: string }
type Inline = string | { tag: Tag; children: Inline[] }
type Context = { active: ReadonlySet<string>; maxLinkTag: number }

type Block = { gap: boolean } & (
  | { kind: "paragraph"; text: string }
  | { kind: "heading"; text: string }
  | { kind: "item"; marker: string; text: string }
  | { kind: "code"; language?: string; code: string }
  | { kind: "quote"; blocks: Block[] }
)

/** A tag or one code point of text; cuts fall only between atoms, so never inside a tag, entity or surrogate pair. */
type Atom = { html: string; text: string; open?: Tag; close?: Tag }

const tag = (name: string, attributes = ""): Tag => ({ name, open: `<${name}${attributes}>`, close: `</${name}>` })
const BOLD = tag("b")
const ITALIC = tag("i")
const STRIKE = tag("s")
const CODE = tag("code")
const PRE = tag("pre")
const QUOTE = tag("blockquote")

const ESCAPED: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;" }
const escapeAttribute = (text: string) => text.replace(/[&<>"]/g, (char) => ESCAPED[char] ?? "&quot;")

/**
 * Renders model-written Markdown as Telegram HTML, split into messages of at most `limit`
 * UTF-16 units of HTML. Whatever the input, every chunk is well-formed: markup that does
 * not pair up stays literal text, and elements cut by a split are closed and re-opened.
 */
export function renderTelegram(markdown: string, limit = TELEGRAM_LIMIT): Chunk[] {
  if (limit < MIN_LIMIT) throw new RangeError(`limit must be at least ${MIN_LIMIT}, got ${limit}`)
  const atoms: Atom[] = []
  const context: Context = { active: new Set(), maxLinkTag: Math.floor(limit / 2) }
  renderBlocks(parseBlocks(markdown.replace(/\r\n?/g, "\n").split("\n")), context, atoms)
  return split(atoms, limit)
}

// ── blocks ────────────────────────────────────────────────────────────────────────────

const FENCE = /^(\s*)(`{3,}|~{3,})(.*)$/
const HEADING = /^ {0,3}#{1,6}(?:[ \t]+(.*))?$/
const QUOTE_LINE = /^ {0,3}>/
const ITEM = /^(\s*(?:[-*+]|\d{1,9}[.)])[ \t]+)(.*)$/

function fenceOf(line: string): { indent: number; marker: string; info: string } | undefined {
  const match = FENCE.exec(line)
  // A backtick "fence" with backticks after it is an inline code span, as in CommonMark.
  if (!match || (match[2][0] === "`" && match[3].includes("`"))) return undefined
  return { indent: match[1].length, marker: match[2], info: match[3].trim() }
}

const startsBlock = (line: string) => fenceOf(line) !== undefined || HEADING.test(line) || QUOTE_LINE.test(line) || ITEM.test(line)

function parseBlocks(lines: string[]): Block[] {
  const blocks: Block[] = []
  let gap = false
  let i = 0
  const push = (block: Block) => {
    blocks.push(block)
    gap = false
  }
  while (i < lines.length) {
    const line = lines[i]
    if (!line.trim()) {
      gap = true
      i++
      continue
    }
    const fence = fenceOf(line)
    if (fence) {
      const body: string[] = []
      const closing = new RegExp(`^\\s*${fence.marker[0]}{${fence.marker.length},}\\s*$`)
      // Models indent fences inside list items; strip that indent from the code, no more.
      const indent = new RegExp(`^[ \\t]{0,${fence.indent}}`)
      for (i++; i < lines.length && !closing.test(lines[i]); i++) body.push(lines[i].replace(indent, ""))
      i++
      const code = body.join("\n")
      const language = /^[\w+#.-]{1,32}$/.exec(fence.info.split(/\s/)[0])?.[0]
      if (code.trim()) push({ kind: "code", language, code, gap })
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
    const text = [item ? item[2] : line.trimStart()]
    // Lines that start no block of their own continue the paragraph or list item above them.
    for (i++; i < lines.length && lines[i].trim() && !startsBlock(lines[i]); i++) text.push(item ? lines[i] : lines[i].trimStart())
    const joined = text.join("\n").trimEnd()
    push(item ? { kind: "item", marker: item[1], text: joined, gap } : { kind: "paragraph", text: joined, gap })
  }
  return blocks
}

function renderBlocks(blocks: Block[], context: Context, atoms: Atom[]): void {
  const text = (value: string) => {
    for (const char of value) atoms.push({ html: ESCAPED[char] ?? char, text: char })
  }
  const element = (t: Tag, body: () => void) => {
    atoms.push({ html: t.open, text: "", open: t })
    body()
    atoms.push({ html: t.close, text: "", close: t })
  }
  const inline = (nodes: Inline[]) => {
    for (const node of nodes) {
      if (typeof node === "string") text(node)
      else element(node.tag, () => inline(node.children))
    }
  }
  blocks.forEach((block, n) => {
    // A blank line in the source stays a blank line; adjacent blocks stay on adjacent lines.
    if (n > 0) text(block.gap ? "\n\n" : "\n")
    switch (block.kind) {
      case "paragraph":
        return inline(parseInline(block.text, context))
      case "heading":
        return inline(wrap(BOLD, parseInline(block.text, enter(context, BOLD)), context))
      case "item":
        text(block.marker)
        return inline(parseInline(block.text, context))
      case "code": {
        const language = block.language
        return element(PRE, () => (language ? element(tag("code", ` class="language-${language}"`), () => text(block.code)) : text(block.code)))
      }
      case "quote":
        if (context.active.has(QUOTE.name)) return renderBlocks(block.blocks, context, atoms)
        return element(QUOTE, () => renderBlocks(block.blocks, enter(context, QUOTE), atoms))
    }
  })
}

// ── inline ────────────────────────────────────────────────────────────────────────────

const ESCAPABLE = /[!-/:-@[-`{-~]/
const SAFE_URL = /^(?:https?:\/\/|tg:\/\/|mailto:)[^\s\x00-\x1f\x7f]+$/i
const isSpace = (char: string | undefined) => char === undefined || /\s/.test(char)
const isWordChar = (char: string | undefined) => char !== undefined && /[\p{L}\p{N}]/u.test(char)

const enter = (context: Context, t: Tag): Context => ({ ...context, active: new Set([...context.active, t.name]) })

/** Telegram has no use for `<b>` inside `<b>`; an element already open contributes only its content. */
const wrap = (t: Tag, children: Inline[], context: Context): Inline[] => (context.active.has(t.name) ? children : [{ tag: t, children }])

const EMPHASIS: Record<string, Tag> = { "~~": STRIKE, "**": BOLD, __: BOLD, "*": ITALIC, _: ITALIC }
/** Where the next character that may start markup is. */
const SPECIAL = /[\\`[*_~]/g

function runEnd(s: string, i: number, end: number): number {
  let k = i
  while (k < end && s[k] === s[i]) k++
  return k
}

const parseInline = (text: string, context: Context) => new InlineParser(text).parse(0, text.length, context)

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

  parse(start: number, end: number, context: Context): Inline[] {
    const s = this.s
    const nodes: Inline[] = []
    let text = ""
    const push = (added: Inline[]) => {
      for (const node of added) {
        if (typeof node === "string") {
          text += node
          continue
        }
        if (text) nodes.push(text)
        text = ""
        nodes.push(node)
      }
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
          push(wrap(CODE, [/^ .*[^ ].* $/s.test(code) ? code.slice(1, -1) : code], context))
        }
        i = after
      } else if (char === "[") {
        const link = context.active.has("a") ? undefined : this.link(i, end, context)
        push(link?.nodes ?? [char])
        i = link?.end ?? i + 1
      } else {
        const delimiter = i + 1 < end && s[i + 1] === char ? char + char : char
        const close = delimiter in EMPHASIS ? this.closerOf(i, end, delimiter) : -1
        if (close < 0) {
          // An unmatched `**` yields one literal `*`, so the second may still open italics.
          text += char
          i++
        } else {
          const t = EMPHASIS[delimiter]
          push(wrap(t, this.parse(i + delimiter.length, close, enter(context, t)), context))
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

  private link(i: number, end: number, context: Context): { nodes: Inline[]; end: number } | undefined {
    const s = this.s
    const k = this.bracketClose.get(i)
    if (k === undefined || k + 1 >= end || s[k + 1] !== "(") return undefined
    let m = k + 2
    for (let depth = 0; m < end && !isSpace(s[m]); m++) {
      if (s[m] === ")" && depth-- === 0) break
      if (s[m] === "(") depth++
    }
    const label = s.slice(i + 1, k)
    const url = s.slice(k + 2, m)
    if (m >= end || s[m] !== ")" || !label.trim() || !url) return undefined
    const link = tag("a", ` href="${escapeAttribute(url)}"`)
    // Unsafe schemes (javascript:, data:) and links too long to re-open after a split are shown as written.
    if (!SAFE_URL.test(url) || link.open.length > context.maxLinkTag) return { nodes: [s.slice(i, m + 1)], end: m + 1 }
    return { nodes: wrap(link, this.parse(i + 1, k, enter(context, link)), context), end: m + 1 }
  }
}

// ── splitting ─────────────────────────────────────────────────────────────────────────

/** How good a cut after `atoms[at - 1]` is: 3 after a blank line, 2 after a line, 1 after a space, 0 anywhere else. */
function priority(atoms: Atom[], at: number): number {
  const previous = atoms[at - 1].text
  if (previous === "\n") return atoms[at - 2]?.text === "\n" ? 3 : 2
  return previous === " " || previous === "\t" ? 1 : 0
}

/** The end of the chunk starting at `start`: the best cut among those whose HTML, closers included, fits. */
function cutOf(atoms: Atom[], start: number, open: readonly Tag[], limit: number): number {
  let length = open.reduce((sum, t) => sum + t.open.length, 0)
  let closing = open.reduce((sum, t) => sum + t.close.length, 0)
  const best = [-1, -1, -1, -1]
  for (let i = start; i < atoms.length; i++) {
    const atom = atoms[i]
    length += atom.html.length
    if (atom.open) closing += atom.open.close.length
    if (atom.close) closing -= atom.close.close.length
    if (length + closing > limit) {
      // MIN_LIMIT guarantees room for the re-opened tags and one character, so some cut exists.
      return best.findLast((cut) => cut >= 0)!
    }
    best[priority(atoms, i + 1)] = i + 1
  }
  return atoms.length
}

function split(atoms: Atom[], limit: number): Chunk[] {
  const chunks: Chunk[] = []
  let open: Tag[] = []
  let start = 0
  for (;;) {
    // Skip what would only start a chunk with blank space or an element that closes at once;
    // inside <pre> only line breaks, so the first line keeps its indentation.
    const blank = open.includes(PRE) ? /^\n$/ : /^\s$/
    for (; start < atoms.length && (atoms[start].close || blank.test(atoms[start].text)); start++) {
      if (atoms[start].close) open = open.slice(0, -1)
    }
    if (start >= atoms.length) return chunks
    let body = atoms.slice(start, cutOf(atoms, start, open, limit))
    const lastText = body.findLastIndex((atom) => /\S/.test(atom.text))
    // A chunk that would end just inside an element leaves that element to the next chunk.
    const dangling = body.findIndex((atom, n) => n > lastText && atom.open)
    if (lastText >= 0 && dangling >= 0) body = body.slice(0, dangling)
    // Trailing blank space is dropped: Telegram trims it anyway.
    const kept = body.filter((atom, n) => n <= lastText || atom.open || atom.close)
    const prefix = open.map((t) => t.open).join("")
    for (const atom of body) {
      if (atom.open) open = [...open, atom.open]
      if (atom.close) open = open.slice(0, -1)
    }
    const html = prefix + kept.map((atom) => atom.html).join("") + open.map((t) => t.close).reverse().join("")
    const plain = kept.map((atom) => atom.text).join("")
    if (plain.trim()) chunks.push({ html, plain })
    start += body.length
  }
}
