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
import { textOf } from "../markdown/inline.ts"
import { split } from "../markdown/split.ts"

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

export function renderSlack(markdown: string, limit = SLACK_LIMIT): string[] {
  if (limit < MIN_LIMIT) throw new RangeError(`limit must be at least ${MIN_LIMIT}, got ${limit}`)
  return split(new MrkdwnWriter().markdown(markdown).atoms, limit).map((part) => part.out)
}

const isBullet = (marker: string) => /^[-*+]$/.test(marker)

class MrkdwnWriter extends AtomWriter {
  protected readonly emphasis = { bold: mark("bold", "*"), italic: mark("italic", "_"), strike: mark("strike", "~"), code: mark("code", "`") }
  /** A quote is a prefix on each of its lines; re-opened after a cut it prefixes the first line. */
  protected readonly quote = mark("quote", "> ", "")

  /** Text as it should read: escaped, each line of a quote prefixed again. */
  protected char(char: string): string {
    return char === "\n" && this.isOpen(this.quote.name) ? "\n> " : (ESCAPED[char] ?? char)
  }

  protected item({ indent, marker }: ItemBlock): void {
    // `*` or `-` at a line start reads as markup in mrkdwn; a bullet reads as a list.
    this.text(`${indent}${isBullet(marker) ? "•" : marker} `)
  }

  protected code({ code }: CodeBlock): void {
    this.wrap(this.isOpen(this.quote.name) ? QUOTED_PRE : PRE, () => this.text(code))
  }

  protected link({ url, source, children }: LinkNode): void {
    // Unsafe schemes (javascript:, data:) are shown as written.
    if (!SAFE_URL.test(url)) return this.text(source)
    // Slack shows a link's label as plain text: the label's own markup is dropped.
    const label = textOf(children).replace(/\s+/g, " ")
    const out = `<${url.replace(/[&<>|]/g, (char) => (char === "&" ? "&amp;" : encodeURIComponent(char)))}|${escapeMrkdwn(label)}>`
    if (out.length > MAX_LINK) return this.text(`${label} (${url})`)
    this.atoms.push({ out, text: label })
  }
}
