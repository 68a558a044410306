/**
 * Text preparation shared by indexing and search, so both sides see the same terms:
 * lower case, NFKC (full-width Latin → ASCII), accents folded, English stop words removed and
 * Porter2 stems for Latin words; Chinese and Japanese runs become Intl.Segmenter words plus
 * overlapping character bigrams. The bigrams make recall independent of where the segmenter
 * happens to cut ("说明天下雨" segments as 说明|天下|雨, yet a query for 明天 must match),
 * the words add weight when a query uses the same word.
 */
import { createRequire } from "node:module"
import porter2 from "wink-nlp-utils/src/string-stem.js"

const CJK_CLASS = "\\p{sc=Han}\\p{sc=Hiragana}\\p{sc=Katakana}ー"
/** A word: letters, marks and digits, with inner apostrophes (it's, o'neill). */
const WORD = /[\p{L}\p{M}\p{N}]+(?:['’][\p{L}\p{M}\p{N}]+)*/gu
/** The same for text that is all ASCII (most notes), which skips normalising and script checks. */
const ASCII_WORD = /[a-z0-9]+(?:'[a-z0-9]+)*/g
const ASCII_TEXT = /^[\x00-\x7f]*$/
/** Splits a word into CJK and non-CJK runs: "用Python写" → 用 | Python | 写. */
const RUN = new RegExp(`[${CJK_CLASS}]+|[^${CJK_CLASS}]+`, "gu")
const CJK_START = new RegExp(`^[${CJK_CLASS}]`, "u")
const LATIN = /^[\p{sc=Latin}\p{M}\p{N}']+$/u
const STEMMABLE = /^[a-z][a-z']*$/
// wink-nlp-utils' default list; its removeWords() works on whole arrays, so the list is read directly.
const STOP_WORDS: ReadonlySet<string> = new Set(createRequire(import.meta.url)("wink-nlp-utils/src/dictionaries/stop_words.json") as string[])
/** Particles and function words that carry no meaning alone. Two-character words need no
 *  entry: as bigrams they are always indexed and IDF weighs them down. */
const CJK_STOP_WORDS: ReadonlySet<string> = new Set([..."的了是在和与及也都就而吧吗呢啊着过之其或のはがをにでともへやかなねよ"])

// The same ICU dictionary segments Chinese and Japanese, whatever the locale.
const segmenter = new Intl.Segmenter("zh", { granularity: "word" })

/** Stemming costs ~5 µs a word and vocabularies are small, so stems are memoised. */
const stems = new Map<string, string>()
const MAX_STEMS = 200_000

function stem(word: string): string {
  let stemmed = stems.get(word)
  if (stemmed === undefined) {
    if (stems.size >= MAX_STEMS) stems.clear()
    stemmed = porter2(word)
    stems.set(word, stemmed)
  }
  return stemmed
}

type Emit = (term: string, start: number, end: number) => void

/** Calls `emit` for every term of `text` with its UTF-16 span in `text`. */
function scan(text: string, emit: Emit): void {
  if (ASCII_TEXT.test(text)) return scanAscii(text.toLowerCase(), emit)
  for (const word of text.matchAll(WORD)) {
    for (const run of word[0].matchAll(RUN)) {
      const start = word.index + run.index
      if (CJK_START.test(run[0])) scanCjk(run[0], start, emit)
      else {
        const term = latinTerm(run[0])
        if (term) emit(term, start, start + run[0].length)
      }
    }
  }
}

/** Lower-casing ASCII keeps every offset, so spans found in `lower` are spans of the text. */
function scanAscii(lower: string, emit: Emit): void {
  ASCII_WORD.lastIndex = 0
  for (let match = ASCII_WORD.exec(lower); match; match = ASCII_WORD.exec(lower)) {
    const term = asciiTerm(match[0])
    if (term) emit(term, match.index, match.index + match[0].length)
  }
}

function asciiTerm(word: string): string | undefined {
  if (STOP_WORDS.has(word)) return undefined
  return STEMMABLE.test(word) ? stem(word) : word
}

function latinTerm(word: string): string | undefined {
  let term = word.normalize("NFKC").toLowerCase().replace(/’/g, "'")
  if (LATIN.test(term)) term = term.normalize("NFD").replace(/\p{M}+/gu, "")
  // Folding may have left plain ASCII ("café" → "cafe"), which then stems like any English word.
  return ASCII_TEXT.test(term) ? asciiTerm(term) : term
}

function scanCjk(run: string, offset: number, emit: Emit): void {
  // Code points, not UTF-16 units: rare Han characters sit outside the BMP.
  const chars = Array.from(run)
  let at = offset
  for (let i = 0; i + 1 < chars.length; i++) {
    const bigram = chars[i]! + chars[i + 1]!
    emit(bigram.normalize("NFKC"), at, at + bigram.length)
    at += chars[i]!.length
  }
  for (const segment of segmenter.segment(run)) {
    const length = Array.from(segment.segment).length
    // Two-character words are already there as bigrams.
    if (!segment.isWordLike || length === 2 || CJK_STOP_WORDS.has(segment.segment)) continue
    emit(segment.segment.normalize("NFKC"), offset + segment.index, offset + segment.index + segment.segment.length)
  }
}

/** The terms of `text`, for indexing and for queries. */
export function terms(text: string): string[] {
  const out: string[] = []
  scan(text, (term) => out.push(term))
  return out
}

export interface TermSpan {
  term: string
  start: number
  end: number
}

/** The terms of `text` with where they are, for cutting snippets. */
export function termSpans(text: string): TermSpan[] {
  const out: TermSpan[] = []
  scan(text, (term, start, end) => out.push({ term, start, end }))
  return out
}

const APPROX_TOKEN = new RegExp(`[${CJK_CLASS}]|[^\\s${CJK_CLASS}]+`, "gu")

/** Rough model-token count (a word, or one CJK character) used to size chunks. */
export function countTokens(text: string): number {
  let count = 0
  for (const _ of text.matchAll(APPROX_TOKEN)) count++
  return count
}

/** Where the token after the first `max` ones starts, or undefined when `text` has no more. */
export function tokenBoundary(text: string, max: number): number | undefined {
  let count = 0
  for (const match of text.matchAll(APPROX_TOKEN)) if (count++ === max) return match.index
  return undefined
}
