import type { MessageEntity } from "grammy/types"

const ENTITY_TYPES: Record<string, MessageEntity["type"]> = {
  b: "bold",
  strong: "bold",
  i: "italic",
  em: "italic",
  u: "underline",
  ins: "underline",
  s: "strikethrough",
  strike: "strikethrough",
  del: "strikethrough",
  span: "spoiler",
  "tg-spoiler": "spoiler",
  a: "text_link",
  code: "code",
  pre: "pre",
  blockquote: "blockquote",
}

const ENTITY = /&(?:(amp|lt|gt|quot)|#(\d{1,7})|#x([\da-f]{1,6}));/
const ENTITY_AT = new RegExp(ENTITY.source, "iy")
const ENTITY_ALL = new RegExp(ENTITY.source, "gi")
const NAMED: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"' }

function decodeEntity(_match: string, name?: string, decimal?: string, hex?: string): string {
  if (name) return NAMED[name.toLowerCase()]
  return String.fromCodePoint(Math.min(decimal ? Number(decimal) : Number.parseInt(hex ?? "", 16), 0x10ffff))
}

/**
 * Telegram's parse_mode HTML: the supported tags, balanced and properly nested, and the
 * entities &lt; &gt; &amp; &quot; and numeric ones (any other `&` is a literal). Errors read
 * like Telegram's, byte offsets in UTF-8. Returns the text and its entities (UTF-16 offsets).
 */
export function parseHtml(html: string): { text: string; entities: MessageEntity[] } | { error: string } {
  const at = (index: number) => `at byte offset ${Buffer.byteLength(html.slice(0, index))}`
  const open: { name: string; offset: number; attributes: Map<string, string> }[] = []
  const entities: MessageEntity[] = []
  let text = ""
  let i = 0
  while (i < html.length) {
    const char = html[i]
    if (char === "&") {
      ENTITY_AT.lastIndex = i
      const match = ENTITY_AT.exec(html)
      text += match ? decodeEntity(match[0], match[1], match[2], match[3]) : "&"
      i += match ? match[0].length : 1
      continue
    }
    if (char !== "<") {
      text += char
      i++
      continue
    }
    const start = i
    if (html[i + 1] === "/") {
      const end = html.indexOf(">", i)
      if (end < 0) return { error: `Unclosed end tag ${at(start)}` }
      const name = html.slice(i + 2, end).trim().toLowerCase()
      const top = open.pop()
      if (!top) return { error: `Unexpected end tag ${at(start)}` }
      if (top.name !== name) return { error: `Unmatched end tag ${at(start)}, expected "</${top.name}>", found "</${name}>"` }
      i = end + 1
      const entity = entityOf(top, text.length, open.at(-1))
      if (entity) entities.push(entity)
      continue
    }
    let k = i + 1
    while (k < html.length && !/[\s>]/.test(html[k])) k++
    const name = html.slice(i + 1, k).toLowerCase()
    if (!(name in ENTITY_TYPES)) return { error: `Unsupported start tag "${name}" ${at(start)}` }
    const attributes = new Map<string, string>()
    for (;;) {
      while (k < html.length && /\s/.test(html[k])) k++
      if (k >= html.length) return { error: `Unclosed start tag ${at(start)}` }
      if (html[k] === ">") break
      const attribute = /^([^\s=>]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/.exec(html.slice(k))
      if (!attribute) return { error: `Expected equal sign in declaration of an attribute of the tag "${name}" ${at(start)}` }
      const value = attribute[2] ?? attribute[3] ?? attribute[4]
      attributes.set(attribute[1].toLowerCase(), value.replace(ENTITY_ALL, decodeEntity))
      k += attribute[0].length
    }
    if (name === "span" && attributes.get("class") !== "tg-spoiler") return { error: `Tag "span" must have class "tg-spoiler" ${at(start)}` }
    open.push({ name, offset: text.length, attributes })
    i = k + 1
  }
  const unclosed = open.pop()
  if (unclosed) return { error: `Can't find end tag corresponding to start tag "${unclosed.name}"` }
  return { text, entities: entities.sort((a, b) => a.offset - b.offset || b.length - a.length) }
}

function entityOf(
  element: { name: string; offset: number; attributes: Map<string, string> },
  end: number,
  parent: { name: string; attributes: Map<string, string> } | undefined,
): MessageEntity | undefined {
  const length = end - element.offset
  const language = /^language-(.+)$/.exec(element.attributes.get("class") ?? "")?.[1]
  // <pre><code class="language-x"> is one pre entity with a language, not a code entity inside a pre.
  if (element.name === "code" && parent?.name === "pre") {
    if (language) parent.attributes.set("language", language)
    return undefined
  }
  if (length === 0) return undefined
  const base = { offset: element.offset, length }
  const type = ENTITY_TYPES[element.name]
  if (type === "text_link") {
    const url = element.attributes.get("href")
    return url ? { ...base, type, url } : undefined
  }
  if (type === "pre") {
    const code = element.attributes.get("language")
    return code ? { ...base, type, language: code } : { ...base, type }
  }
  return { ...base, type } as MessageEntity
}
