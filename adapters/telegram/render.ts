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

const escapeText = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
const escapeAttribute = (text: string) => escapeText(text).replace(/"/g, "&quot;")

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
    for (const char of value) atoms.push({ html: escapeText(char), text: char })
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

function runEnd(s: string, i: number): number {
  let end = i
  while (s[end] === s[i]) end++
  return end
}

/** Where a code span opened by `length` backticks ends: the next run of exactly that many. */
function codeClose(s: string, from: number, length: number): number {
  for (let k = s.indexOf("`", from); k >= 0; ) {
    const end = runEnd(s, k)
    if (end - k === length) return k
    k = s.indexOf("`", end)
  }
  return -1
}

/** Skips a code span or an escape at `k`, since neither can hold a delimiter; returns where to look next. */
function skipLiteral(s: string, k: number): number | undefined {
  if (s[k] === "\\") return k + 2
  if (s[k] !== "`") return undefined
  const end = runEnd(s, k)
  const close = codeClose(s, end, end - k)
  return close < 0 ? end : close + (end - k)
}

/**
 * The closing delimiter for `delimiter` opened at `i`, or -1. Openers must be followed and
 * closers preceded by non-space, `_` must not sit inside a word (snake_case stays as is),
 * and a run of exactly two characters belongs to `**`/`__`, not to `*`/`_`.
 */
function closerOf(s: string, i: number, delimiter: string): number {
  const char = delimiter[0]
  const from = i + delimiter.length
  if (isSpace(s[from]) || (char === "_" && isWordChar(s[i - 1]))) return -1
  for (let k = from; k < s.length; ) {
    const skipped = skipLiteral(s, k)
    if (skipped !== undefined) {
      k = skipped
      continue
    }
    if (s[k] !== char) {
      k++
      continue
    }
    const end = runEnd(s, k)
    const fits = delimiter.length === 2 ? end - k >= 2 : end - k !== 2
    if (fits && k > from && !isSpace(s[k - 1]) && !(char === "_" && isWordChar(s[end]))) return end - delimiter.length
    k = end
  }
  return -1
}

function parseLink(s: string, i: number, context: Context): { nodes: Inline[]; end: number } | undefined {
  let k = i + 1
  for (let depth = 0; k < s.length; ) {
    const skipped = skipLiteral(s, k)
    if (skipped !== undefined) {
      k = skipped
      continue
    }
    if (s[k] === "]" && depth-- === 0) break
    if (s[k] === "[") depth++
    k++
  }
  if (s[k + 1] !== "(") return undefined
  let m = k + 2
  for (let depth = 0; m < s.length && !isSpace(s[m]); m++) {
    if (s[m] === ")" && depth-- === 0) break
    if (s[m] === "(") depth++
  }
  const label = s.slice(i + 1, k)
  const url = s.slice(k + 2, m)
  if (s[m] !== ")" || !label.trim() || !url) return undefined
  const end = m + 1
  const link = tag("a", ` href="${escapeAttribute(url)}"`)
  // Unsafe schemes (javascript:, data:) and links too long to re-open after a split are shown as written.
  if (!SAFE_URL.test(url) || link.open.length > context.maxLinkTag) return { nodes: [s.slice(i, end)], end }
  return { nodes: wrap(link, parseInline(label, enter(context, link)), context), end }
}

const EMPHASIS: Record<string, Tag> = { "~~": STRIKE, "**": BOLD, __: BOLD, "*": ITALIC, _: ITALIC }

function parseInline(s: string, context: Context): Inline[] {
  const nodes: Inline[] = []
  const push = (...added: Inline[]) => {
    for (const node of added) {
      if (typeof node === "string" && typeof nodes.at(-1) === "string") nodes[nodes.length - 1] += node
      else nodes.push(node)
    }
  }
  let i = 0
  while (i < s.length) {
    const char = s[i]
    if (char === "\\" && ESCAPABLE.test(s[i + 1] ?? "")) {
      push(s[i + 1])
      i += 2
    } else if (char === "`") {
      const end = runEnd(s, i)
      const close = codeClose(s, end, end - i)
      if (close < 0) {
        // The whole run is literal, so a shorter run inside it cannot open a span either.
        push(s.slice(i, end))
        i = end
      } else {
        const code = s.slice(end, close)
        push(...wrap(CODE, [/^ .*[^ ].* $/s.test(code) ? code.slice(1, -1) : code], context))
        i = close + (end - i)
      }
    } else if (char === "[" && !context.active.has("a")) {
      const link = parseLink(s, i, context)
      if (link) {
        push(...link.nodes)
        i = link.end
      } else {
        push(char)
        i++
      }
    } else if (char === "*" || char === "_" || char === "~") {
      const delimiter = s[i + 1] === char ? char + char : char
      const close = delimiter in EMPHASIS ? closerOf(s, i, delimiter) : -1
      if (close < 0) {
        // An unmatched `**` yields one literal `*`, so the second may still open italics.
        push(char)
        i++
      } else {
        const t = EMPHASIS[delimiter]
        push(...wrap(t, parseInline(s.slice(i + delimiter.length, close), enter(context, t)), context))
        i = close + delimiter.length
      }
    } else {
      push(char)
      i++
    }
  }
  return nodes
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
    if (!atom.open && !atom.close) best[priority(atoms, i + 1)] = i + 1
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
    for (; start < atoms.length && (atoms[start].close || (!atoms[start].open && blank.test(atoms[start].text))); start++) {
      if (atoms[start].close) open = open.slice(0, -1)
    }
    if (start >= atoms.length) return chunks
    const cut = cutOf(atoms, start, open, limit)
    const body = atoms.slice(start, cut)
    const lastText = body.findLastIndex((atom) => !atom.open && !atom.close && /\S/.test(atom.text))
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
    start = cut
  }
}
