/**
 * Model-written Markdown → Slack mrkdwn, split into message parts.
 *
 * Slack caps a section block's text at 3,000 characters (a message's `text` may be longer,
 * but a part that fits a section can carry buttons), so every part is at most SLACK_LIMIT
 * characters of mrkdwn. Cuts fall on a blank line, else a line end, else a space; formatting
 * cut by a split is closed and re-opened (a code block gets its fences on both sides), and a
 * link or an entity is never cut.
 */
import { AtomWriter, ESCAPED, type CodeBlock, type ItemBlock, type LinkNode, type Wrapper } from "../markdown/writer.ts"
import { textOf, type Inline } from "../markdown/inline.ts"
import { split, splitPlain } from "../markdown/split.ts"

export const SLACK_LIMIT = 3000

/** A link longer than this is shown as text (label and URL), so a link is never what does not fit. */
const MAX_LINK = 500
/** Room for a link plus the deepest stack of re-opened marks. */
const MIN_LIMIT = 2 * MAX_LINK

const mark = (name: string, open: string, close = open): Wrapper => ({ name, open, close })
const PRE = mark("pre", "```\n", "\n```")
/** In a quote the fences share the lines of the code, since every line must start with "> ". */
const QUOTED_PRE = mark("pre", "```")
const SAFE_URL = /^(?:https?:\/\/|mailto:)[^\s\x00-\x1f\x7f]+$/i

export const escapeMrkdwn = (text: string) => text.replace(/[&<>]/g, (char) => ESCAPED[char])

/**
 * mrkdwn has no escape for a backtick, and a literal one could open or close code (three open a
 * code block that swallows the rest of the message). So a backtick that is text is kept from
 * touching anything Slack could pair it with by a zero-width space on each side: every character
 * stays, and Slack shows the backtick as written.
 */
const ZWSP = "\u200B"
const LITERAL_BACKTICK = `${ZWSP}\`${ZWSP}`
const plainChar = (char: string) => (char === "`" ? LITERAL_BACKTICK : (ESCAPED[char] ?? char))

/** Should rendering itself fail (a defect), `onFallback` hears why and the text goes out as
 *  escaped plain text, so a send never fails for a reason of ours that a retry cannot fix. */
export function renderSlack(markdown: string, limit = SLACK_LIMIT, onFallback?: (error: unknown) => void): string[] {
  if (limit < MIN_LIMIT) throw new RangeError(`limit must be at least ${MIN_LIMIT}, got ${limit}`)
  try {
    return split(new MrkdwnWriter().markdown(markdown).atoms, limit).map((part) => part.out)
  } catch (error) {
    onFallback?.(error)
    return splitPlain(markdown, limit, plainChar).map((part) => part.out)
  }
}

const isBullet = (marker: string) => /^[-*+]$/.test(marker)

class MrkdwnWriter extends AtomWriter {
  protected readonly emphasis = { bold: mark("bold", "*"), italic: mark("italic", "_"), strike: mark("strike", "~"), code: mark("code", "`") }
  /** A quote is a prefix on each of its lines; re-opened after a cut it prefixes the first line. */
  protected readonly quote = mark("quote", "> ", "")

  /** The character last written: inside a code block a backtick after a backtick is kept apart. */
  private previous = ""

  /** Text as it should read: escaped, each line of a quote prefixed again, a backtick kept literal. */
  protected char(char: string): string {
    const previous = this.previous
    this.previous = char
    if (char === "\n" && this.isOpen(this.quote.name)) return "\n> "
    // In a code block only a run of three would close it; but in a quote the fences sit right
    // beside the code, and outside code any backtick could pair: there each is kept apart.
    if (char === "`" && this.isOpen(PRE.name) && !this.isOpen(this.quote.name)) return previous === "`" ? ZWSP + char : char
    return plainChar(char)
  }

  /** An inline code span whose code holds a backtick cannot be written in mrkdwn: it is shown as text. */
  protected codeSpan(children: Inline[]): void {
    if (textOf(children).includes("`")) this.inline(children)
    else super.codeSpan(children)
  }

  protected item({ indent, marker }: ItemBlock): void {
    // `*` or `-` at a line start reads as markup in mrkdwn; a bullet reads as a list.
    this.text(`${indent}${isBullet(marker) ? "•" : marker} `)
  }

  protected code({ code }: CodeBlock): void {
    this.previous = ""
    this.wrap(this.isOpen(this.quote.name) ? QUOTED_PRE : PRE, () => this.text(code))
  }

  protected link({ url, source, children }: LinkNode): void {
    // Unsafe schemes (javascript:, data:) are shown as written.
    if (!SAFE_URL.test(url)) return this.text(source)
    // Slack shows a link's label as plain text: the label's own markup is dropped, and a literal
    // backtick in it is kept apart like one in text (Slack would pair it with the next one).
    const label = textOf(children).replace(/\s+/g, " ")
    const out = `<${url.replace(/[&<>|]/g, (char) => (char === "&" ? "&amp;" : encodeURIComponent(char)))}|${[...label].map(plainChar).join("")}>`
    if (out.length > MAX_LINK) return this.text(`${label} (${url})`)
    this.atoms.push({ out, text: label })
  }
}
