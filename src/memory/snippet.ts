import type { LanguageCode } from "./language.ts"
import { termSpans } from "./text.ts"

export const MAX_SNIPPET = 300
const ELLIPSIS = "…"
const WORD_CHAR = /[\p{L}\p{N}]/u

/**
 * At most MAX_SNIPPET characters of `text` around the passage where the most distinct query
 * terms meet, with an ellipsis on each side that was cut. The kept part is verbatim text.
 * `language`: the one `text` was indexed in (detected when not given).
 */
export function snippet(text: string, queryTerms: ReadonlySet<string>, language?: LanguageCode): string {
  if (text.length <= MAX_SNIPPET) return text
  const width = MAX_SNIPPET - 2 * ELLIPSIS.length
  const hits = termSpans(text, language).filter((span) => queryTerms.has(span.term))
  let best = { first: 0, last: -1, distinct: 0 }
  for (let first = 0; first < hits.length; first++) {
    const seen = new Set<string>()
    let last = first
    while (last < hits.length && hits[last]!.end - hits[first]!.start <= width) seen.add(hits[last++]!.term)
    if (seen.size > best.distinct || (seen.size === best.distinct && last - 1 - first > best.last - best.first)) best = { first, last: last - 1, distinct: seen.size }
  }
  const start = hits[best.first]?.start ?? 0
  const end = best.last >= 0 ? hits[best.last]!.end : 0
  // Centre the passage in the window, then keep the window inside the text.
  let from = Math.max(0, start - Math.floor((width - (end - start)) / 2))
  let to = Math.min(text.length, from + width)
  from = Math.max(0, to - width)
  from = wordStart(text, from, start)
  to = wordEnd(text, to, end)
  return `${from > 0 ? ELLIPSIS : ""}${text.slice(from, to).trim()}${to < text.length ? ELLIPSIS : ""}`
}

/** Moves a cut that falls inside a word (or a surrogate pair) forward to the next space, not past `limit`. */
function wordStart(text: string, from: number, limit: number): number {
  if (from > 0 && isLowSurrogate(text, from)) from++
  if (from === 0 || !WORD_CHAR.test(text[from - 1]!) || !WORD_CHAR.test(text[from]!)) return from
  const space = text.slice(from, limit).search(/\s/)
  return space < 0 ? from : from + space + 1
}

/** Moves a cut that falls inside a word (or a surrogate pair) back to the previous space, not before `limit`. */
function wordEnd(text: string, to: number, limit: number): number {
  if (to < text.length && isLowSurrogate(text, to)) to--
  if (to >= text.length || !WORD_CHAR.test(text[to - 1]!) || !WORD_CHAR.test(text[to]!)) return to
  const space = text.slice(limit, to).search(/\s\S*$/)
  return space < 0 ? to : limit + space
}

function isLowSurrogate(text: string, at: number): boolean {
  const code = text.charCodeAt(at)
  return code >= 0xdc00 && code <= 0xdfff
}
