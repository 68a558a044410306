/**
 * Telegram's parse_mode HTML as the Bot API documents it ("Formatting options", "HTML style"),
 * written from the docs, not from our renderer, for the property tests:
 *
 * - Tags: b, strong, i, em, u, ins, s, strike, del, span class="tg-spoiler", tg-spoiler,
 *   a href, code, pre, pre > code class="language-…", blockquote and blockquote expandable.
 * - "All <, > and & symbols that are not a part of a tag or an HTML entity must be replaced";
 *   the named entities are &lt; &gt; &amp; &quot; (numeric ones are allowed too; we send none).
 * - Nesting: if two entities share characters one contains the other (tags properly nested);
 *   bold, italic, underline, strikethrough and spoiler may contain and be part of any entity
 *   except pre and code; blockquotes cannot be nested; all other entities (links, code, pre)
 *   cannot contain each other. A pre's code with a language is the pre's whole content.
 * - The message is 1-4096 characters after entity parsing (counted here in UTF-16 units, which
 *   is never fewer than the characters Telegram counts).
 */
export const TELEGRAM_TEXT_LIMIT = 4096

const FORMATTING = new Set(["b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "span", "tg-spoiler"])
const ATTRIBUTES: Record<string, RegExp> = {
  a: /^ href="[^"<>]*"$/,
  span: /^ class="tg-spoiler"$/,
  blockquote: /^(?: expandable)?$/,
}
const NAMED = { amp: "&", lt: "<", gt: ">", quot: '"' } as const
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

type Open = { name: string; at: number; end: number }

/** What Telegram would refuse in `html` (or what the docs forbid), each with where; [] if nothing. */
export function telegramHtmlProblems(html: string): string[] {
  const problems: string[] = []
  const open: Open[] = []
  for (const match of html.matchAll(/<(\/?)([a-z-]*)([^<>]*)>|&[^;\s&<>]{0,8};?|[<>]/g)) {
    const [token, closing, name, attributes] = match
    const at = match.index
    if (token.startsWith("&")) {
      if (!/^&(?:amp|lt|gt|quot);$/.test(token)) problems.push(`entity ${JSON.stringify(token)} at ${at}`)
      continue
    }
    if (name === undefined) {
      problems.push(`unescaped ${JSON.stringify(token)} at ${at}`)
      continue
    }
    const inside = open.map((element) => element.name)
    if (closing) {
      const top = open.pop()
      if (!top || top.name !== name || attributes) problems.push(`</${name}> closes <${top?.name ?? "nothing"}> at ${at}`)
      else if (top.name === "code" && inside.at(-2) === "pre" && html.slice(at + token.length, at + token.length + 6) !== "</pre>") problems.push(`text after a pre's code at ${at}`)
      continue
    }
    const languageCode = name === "code" && inside.at(-1) === "pre" && html.slice(open.at(-1)!.end, at) === ""
    if (!(FORMATTING.has(name) || name in ATTRIBUTES || name === "code" || name === "pre")) problems.push(`tag <${name}> at ${at}`)
    const allowed = languageCode ? /^(?: class="language-[^"<>&\s]+")?$/ : (ATTRIBUTES[name] ?? /^$/)
    if (!allowed.test(attributes)) problems.push(`attributes ${JSON.stringify(attributes)} on <${name}> at ${at}`)
    if (inside.includes("code") || (inside.includes("pre") && !languageCode)) problems.push(`<${name}> inside code or pre at ${at}`)
    if ((name === "code" || name === "pre") && inside.some((outer) => FORMATTING.has(outer) || outer === "a")) problems.push(`<${name}> inside ${inside.join(">")} at ${at}`)
    if (name === "a" && inside.includes("a")) problems.push(`a link inside a link at ${at}`)
    if (name === "blockquote" && inside.some((outer) => outer === "blockquote" || outer === "a")) problems.push(`<blockquote> inside ${inside.join(">")} at ${at}`)
    open.push({ name, at, end: at + token.length })
  }
  if (open.length > 0) problems.push(`unclosed ${open.map((element) => element.name).join(", ")}`)
  const text = telegramTextOf(html)
  if (text.length > TELEGRAM_TEXT_LIMIT) problems.push(`${text.length} characters of text, over ${TELEGRAM_TEXT_LIMIT}`)
  if (!text.trim()) problems.push("no text")
  if (LONE_SURROGATE.test(html)) problems.push("a split surrogate pair")
  return problems
}

const unescape = (text: string) => text.replace(/&(amp|lt|gt|quot);/g, (_, name: keyof typeof NAMED) => NAMED[name])

/** The text Telegram shows for `html`: tags gone, entities decoded. */
export function telegramTextOf(html: string): string {
  return unescape(html.replace(/<[^>]*>/g, ""))
}

/** The text with each link's URL right after its label, as `[label](url)` has them; and the URLs. */
export function telegramReading(html: string): { text: string; urls: string[] } {
  const urls: string[] = []
  const pending: string[] = []
  const text = html.replace(/<a href="([^"]*)">|<\/a>|<[^>]*>|[^<]+/g, (token, href?: string) => {
    if (href !== undefined) {
      urls.push(unescape(href))
      pending.push(unescape(href))
      return ""
    }
    if (token === "</a>") return pending.pop() ?? ""
    return token.startsWith("<") ? "" : unescape(token)
  })
  return { text, urls }
}
