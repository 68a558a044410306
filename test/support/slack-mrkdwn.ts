/**
 * Slack's mrkdwn and Block Kit limits as Slack documents them ("Formatting text for app
 * surfaces", the section, actions and button block references), written for the property tests:
 *
 * - Only &, < and > are escaped (&amp; &lt; &gt;); a raw < opens a link `<url|label>` (or a
 *   mention, which we never write), a raw > closes one or starts a quote line ("> ").
 * - Code: ``` opens and closes a code block, a single ` opens and closes inline code. mrkdwn has
 *   no escape for a backtick, so a literal one must not be able to pair: we require every other
 *   backtick to sit between zero-width spaces (U+200B), and no run of backticks but ``` fences.
 * - A section's text: 1-3,000 characters; a message: at most 50 blocks; a button's text 1-75
 *   characters, its value at most 2,000, action_id and block_id at most 255.
 */
export const SECTION_LIMIT = 3000
export const ZWSP = "\u200B"
const LINK = /^<(?:https?:\/\/|mailto:)[^\s|<>]+\|[^<>]*>$/i
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** What Slack would misread in a part of mrkdwn, each with where; [] if nothing. */
export function mrkdwnProblems(part: string, limit = SECTION_LIMIT): string[] {
  const problems: string[] = []
  if (part.length > limit) problems.push(`${part.length} characters, over ${limit}`)
  if (!part.replaceAll(ZWSP, "").trim()) problems.push("no text")
  for (const match of part.matchAll(/&(?!(?:amp|lt|gt);)/g)) problems.push(`an unescaped & at ${match.index}`)
  for (const match of part.matchAll(/<[^>]*>?|>/g)) {
    const quote = match[0] === ">" && (match.index === 0 || part[match.index - 1] === "\n") && part[match.index + 1] === " "
    if (!quote && !LINK.test(match[0])) problems.push(`stray ${JSON.stringify(match[0].slice(0, 40))} at ${match.index}`)
  }
  // Backticks: fences pair up, code spans pair up outside them, every other backtick is guarded.
  let fenced = false
  let spans = 0
  for (const match of part.matchAll(/`+/g)) {
    const guarded = part[match.index - 1] === ZWSP && part[match.index + match[0].length] === ZWSP && match[0].length === 1
    if (match[0] === "```") fenced = !fenced
    else if (fenced && !guarded && match[0].length > 1) problems.push(`a run of ${match[0].length} backticks in a code block at ${match.index}`)
    else if (!fenced && !guarded) {
      if (match[0].length > 1) problems.push(`a run of ${match[0].length} backticks at ${match.index}`)
      else spans++
    }
  }
  if (fenced) problems.push("an unclosed code block")
  if (spans % 2 !== 0) problems.push("an unpaired code mark")
  if (LONE_SURROGATE.test(part)) problems.push("a split surrogate pair")
  return problems
}

const unescape = (text: string) => text.replace(/&(amp|lt|gt);/g, (_, name: string) => ({ amp: "&", lt: "<", gt: ">" })[name]!)

/** The text a part reads as, each link's URL right after its label, zero-width spaces gone; and the URLs. */
export function mrkdwnReading(part: string): { text: string; urls: string[] } {
  const urls: string[] = []
  const text = part.replace(/<([^|<>]*)\|([^<>]*)>|[^<]+/g, (token, url?: string, label?: string) => {
    if (url === undefined) return unescape(token)
    urls.push(unescape(url))
    return unescape(label!) + unescape(url)
  })
  return { text: text.replaceAll(ZWSP, ""), urls }
}

type Button = { type: string; action_id?: string; text?: { type: string; text: string }; value?: string }
type Block = { type: string; block_id?: string; text?: { text: string }; elements?: Button[] }

/** What Slack would refuse in a message's blocks. */
export function blocksProblems(blocks: Block[]): string[] {
  const problems: string[] = []
  if (blocks.length > 50) problems.push(`${blocks.length} blocks, over 50`)
  for (const block of blocks) {
    if ((block.block_id?.length ?? 0) > 255) problems.push("a block_id over 255")
    if (block.type === "section" && (!block.text?.text || block.text.text.length > SECTION_LIMIT)) problems.push("a section text empty or over 3,000")
    if (block.type !== "actions") continue
    if (!block.elements?.length || block.elements.length > 25) problems.push(`${block.elements?.length ?? 0} elements in an actions block`)
    for (const button of block.elements ?? []) {
      const label = button.text?.text ?? ""
      if (!label || label.length > 75 || LONE_SURROGATE.test(label)) problems.push(`button text ${JSON.stringify(label)}`)
      if (!button.action_id || button.action_id.length > 255) problems.push("an action_id empty or over 255")
      if ((button.value?.length ?? 0) > 2000) problems.push("a value over 2,000")
    }
  }
  return problems
}
