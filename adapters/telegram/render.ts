import { AtomWriter, ESCAPED, type CodeBlock, type ItemBlock, type LinkNode, type Wrapper } from "../markdown/writer.ts"
import type { Inline } from "../markdown/inline.ts"
import { split, splitPlain } from "../markdown/split.ts"

/** One Telegram message of a rendered reply: `html` for parse_mode HTML, `plain` for when Telegram rejects it. */
export type Chunk = { html: string; plain: string }

/** Telegram's message limit. Telegram counts the text after parsing; we bound the HTML itself, which is never shorter. */
export const TELEGRAM_LIMIT = 4096

/**
 * The smallest `limit` that always fits the deepest stack of re-opened tags plus one character:
 * a link tag may take half the limit (longer ones are shown as text) and the other tags ~70 units.
 */
const MIN_LIMIT = 512

const tag = (name: string, attributes = ""): Wrapper => ({ name, open: `<${name}${attributes}>`, close: `</${name}>` })
const PRE = tag("pre")
/** Telegram's formatting entities: they may hold and sit in anything except code and pre. */
const FORMATTING = new Set(["b", "i", "s"])
const SAFE_URL = /^(?:https?:\/\/|tg:\/\/|mailto:)[^\s\x00-\x1f\x7f]+$/i

const escapeAttribute = (text: string) => text.replace(/[&<>"]/g, (char) => ESCAPED[char] ?? "&quot;")

/**
 * Renders model-written Markdown as Telegram HTML, split into messages of at most `limit`
 * UTF-16 units of HTML. Whatever the input, every chunk is well-formed: markup that does
 * not pair up stays literal text, and elements cut by a split are closed and re-opened.
 * Should rendering itself fail (a defect), `onFallback` hears why and the text goes out as
 * escaped plain text, so a send never fails for a reason of ours that a retry cannot fix.
 */
export function renderTelegram(markdown: string, limit = TELEGRAM_LIMIT, onFallback?: (error: unknown) => void): Chunk[] {
  if (limit < MIN_LIMIT) throw new RangeError(`limit must be at least ${MIN_LIMIT}, got ${limit}`)
  try {
    const { atoms } = new HtmlWriter(Math.floor(limit / 2)).markdown(markdown)
    return split(atoms, limit).map((part) => ({ html: part.out, plain: part.text }))
  } catch (error) {
    onFallback?.(error)
    return splitPlain(markdown, limit, escapeChar).map((part) => ({ html: part.out, plain: part.text }))
  }
}

const escapeChar = (char: string) => ESCAPED[char] ?? char

class HtmlWriter extends AtomWriter {
  protected readonly emphasis = { bold: tag("b"), italic: tag("i"), strike: tag("s"), code: tag("code") }
  protected readonly quote = tag("blockquote")

  /** `maxLinkTag`: the longest `<a href>` that can still be re-opened after a split. */
  constructor(private readonly maxLinkTag: number) {
    super()
  }

  protected char(char: string): string {
    return escapeChar(char)
  }

  protected item({ indent, marker, spacing }: ItemBlock): void {
    this.text(indent + marker + spacing)
  }

  /**
   * Telegram allows no entity inside code, and code inside neither a link nor bold, italic or
   * strikethrough. In a link the code's text stays part of the link, without the code; inside
   * formatting, the formatting is closed around the code and re-opened after it.
   */
  protected codeSpan(children: Inline[]): void {
    if (this.isOpen("a")) return this.inline(children)
    this.outside(FORMATTING, () => super.codeSpan(children))
  }

  protected code({ language, code }: CodeBlock): void {
    this.wrap(PRE, () => (language ? this.wrap(tag("code", ` class="language-${language}"`), () => this.text(code)) : this.text(code)))
  }

  protected link({ url, source, children }: LinkNode): void {
    const link = tag("a", ` href="${escapeAttribute(url)}"`)
    // Unsafe schemes (javascript:, data:) and links too long to re-open after a split are shown as written.
    if (!SAFE_URL.test(url) || link.open.length > this.maxLinkTag) return this.text(source)
    this.wrap(link, () => this.inline(children))
  }
}
