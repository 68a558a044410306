/** A block of model-written Markdown; `gap` says a blank line came before it. */
export type Block = { gap: boolean } & (
  | { kind: "paragraph"; text: string }
  | { kind: "heading"; text: string }
  /** A list item: `indent`, `marker` (`-`, `*`, `+`, `1.`, `1)`) and the `spacing` after it, as written. */
  | { kind: "item"; indent: string; marker: string; spacing: string; text: string }
  | { kind: "code"; language?: string; code: string }
  | { kind: "quote"; blocks: Block[] }
)

const FENCE = /^(\s*)(`{3,}|~{3,})(.*)$/
const HEADING = /^ {0,3}#{1,6}(?:[ \t]+(.*))?$/
const QUOTE_LINE = /^ {0,3}>/
const ITEM = /^(\s*)([-*+]|\d{1,9}[.)])([ \t]+)(.*)$/
/** All of a line's quote markers at once. */
const QUOTE_MARKERS = /^(?: {0,3}> ?)+/

/**
 * How deep quotes nest as blocks. The renderers flatten a quote in a quote anyway; below this
 * depth a line's remaining markers are all dropped at once, so parsing thousands of `> ` does
 * not recurse thousands deep.
 */
const MAX_QUOTE_DEPTH = 8

/** The blocks of `markdown`, any line ending. Inline markup stays in their text, for parseInline. */
export function parseBlocks(markdown: string): Block[] {
  return blocksOf(markdown.replace(/\r\n?/g, "\n").split("\n"), 0)
}

function fenceOf(line: string): { indent: number; marker: string; info: string } | undefined {
  const match = FENCE.exec(line)
  // A backtick "fence" with backticks after it is an inline code span, as in CommonMark.
  if (!match || (match[2][0] === "`" && match[3].includes("`"))) return undefined
  return { indent: match[1].length, marker: match[2], info: match[3].trim() }
}

const startsBlock = (line: string) => fenceOf(line) !== undefined || HEADING.test(line) || QUOTE_LINE.test(line) || ITEM.test(line)

function blocksOf(lines: string[], depth: number): Block[] {
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
      const marker = depth + 1 < MAX_QUOTE_DEPTH ? /^ {0,3}> ?/ : QUOTE_MARKERS
      for (; i < lines.length && QUOTE_LINE.test(lines[i]); i++) inner.push(lines[i].replace(marker, ""))
      const nested = blocksOf(inner, depth + 1)
      if (nested.length > 0) push({ kind: "quote", blocks: nested, gap })
      continue
    }
    const item = ITEM.exec(line)
    const text = [item ? item[4] : line.trimStart()]
    // Lines that start no block of their own continue the paragraph or list item above them.
    for (i++; i < lines.length && lines[i].trim() && !startsBlock(lines[i]); i++) text.push(item ? lines[i] : lines[i].trimStart())
    const joined = text.join("\n").trimEnd()
    push(item ? { kind: "item", indent: item[1], marker: item[2], spacing: item[3], text: joined, gap } : { kind: "paragraph", text: joined, gap })
  }
  return blocks
}
