/**
 * Text preparation shared by indexing and search, so both sides see the same terms: lower
 * case, NFKC (full-width Latin → ASCII), stop words removed and words stemmed by the text's
 * language (language.ts), accents folded; Chinese and Japanese runs become Intl.Segmenter words
 * plus overlapping character bigrams. The bigrams make recall independent of where the
 * segmenter happens to cut ("说明天下雨" segments as 说明|天下|雨, yet a query for 明天 must
 * match), the words add weight when a query uses the same word.
 */
import { detectLanguage, LANGUAGE_CODES, LANGUAGES, type LanguageCode } from "./language.ts"

const CJK_CLASS = "\\p{sc=Han}\\p{sc=Hiragana}\\p{sc=Katakana}ー"
/** A word: letters, marks and digits, with inner apostrophes (it's, o'neill). */
const WORD = /[\p{L}\p{M}\p{N}]+(?:['’][\p{L}\p{M}\p{N}]+)*/gu
/** The same for text that is all ASCII (most notes), which skips normalising and script checks. */
const ASCII_WORD = /[a-z0-9]+(?:'[a-z0-9]+)*/g
const ASCII_TEXT = /^[\x00-\x7f]*$/
/** Splits a word into CJK and non-CJK runs: "用Python写" → 用 | Python | 写. */
const RUN = new RegExp(`[${CJK_CLASS}]+|[^${CJK_CLASS}]+`, "gu")
const CJK_START = new RegExp(`^[${CJK_CLASS}]`, "u")
/** Particles and function words that carry no meaning alone. Two-character words need no
 *  entry: as bigrams they are always indexed and IDF weighs them down. */
const CJK_STOP_WORDS: ReadonlySet<string> = new Set([..."的了是在和与及也都就而吧吗呢啊着过之其或のはがをにでともへやかなねよ"])

// The same ICU dictionary segments Chinese and Japanese, whatever the locale.
const segmenter = new Intl.Segmenter("zh", { granularity: "word" })

/** Stemming costs microseconds a word and vocabularies are small, so word terms are memoised. */
const memo: Record<LanguageCode, Map<string, string[]>> = Object.fromEntries(LANGUAGE_CODES.map((code) => [code, new Map()])) as never
const MAX_MEMO = 200_000
const NONE: string[] = []

/** The terms of one lower-cased word in `language`: none for a stop word. */
function wordTerms(word: string, language: LanguageCode): string[] {
  const cache = memo[language]
  let terms = cache.get(word)
  if (terms === undefined) {
    if (cache.size >= MAX_MEMO) cache.clear()
    const normal = word.normalize("NFKC").replace(/’/g, "'")
    const entry = LANGUAGES[language]
    terms = entry.stopWords.has(normal) ? NONE : /^[\p{L}\p{M}']/u.test(normal) ? entry.stem(normal) : [normal]
    cache.set(word, terms)
  }
  return terms
}

type Emit = (term: string, start: number, end: number) => void

/** Calls `emit` for every term of `text` with its UTF-16 span in `text`. */
function scan(text: string, language: LanguageCode, emit: Emit): void {
  if (ASCII_TEXT.test(text)) return scanAscii(text.toLowerCase(), language, emit)
  for (const word of text.matchAll(WORD)) {
    for (const run of word[0].matchAll(RUN)) {
      const start = word.index + run.index
      if (CJK_START.test(run[0])) scanCjk(run[0], start, emit)
      else for (const term of wordTerms(run[0].toLowerCase(), language)) emit(term, start, start + run[0].length)
    }
  }
}

/** Lower-casing ASCII keeps every offset, so spans found in `lower` are spans of the text. */
function scanAscii(lower: string, language: LanguageCode, emit: Emit): void {
  ASCII_WORD.lastIndex = 0
  for (let match = ASCII_WORD.exec(lower); match; match = ASCII_WORD.exec(lower)) {
    for (const term of wordTerms(match[0], language)) emit(term, match.index, match.index + match[0].length)
  }
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

/** The terms of `text` (in its detected language unless told), for indexing. */
export function terms(text: string, language: LanguageCode = detectLanguage(text)): string[] {
  const out: string[] = []
  scan(text, language, (term) => out.push(term))
  return out
}

export interface TermSpan {
  term: string
  start: number
  end: number
}

/** The terms of `text` with where they are, for cutting snippets. */
export function termSpans(text: string, language: LanguageCode = detectLanguage(text)): TermSpan[] {
  const out: TermSpan[] = []
  scan(text, language, (term, start, end) => out.push({ term, start, end }))
  return out
}

/**
 * One word of a query, analysed in every supported language: the query's detected language
 * first. A two-word query is too short to detect reliably, and a short note may have been
 * indexed in the default language, so search picks per word the first analysis the index
 * knows in that language (expand.ts).
 */
export interface QueryWord {
  /** Lower-cased NFKC, accents kept: what a compound is split from. */
  text: string
  /** `language` undefined: the same in every language (Chinese and Japanese terms). */
  forms: Array<{ language?: LanguageCode; terms: string[] }>
}

/** The searchable words of a query; a stop word of the query's language is none. */
export function queryWords(query: string): QueryWord[] {
  const detected = detectLanguage(query)
  const order = [detected, ...LANGUAGE_CODES.filter((code) => code !== detected)]
  const words: QueryWord[] = []
  const cjk: string[] = []
  for (const word of query.matchAll(WORD)) {
    for (const run of word[0].matchAll(RUN)) {
      if (CJK_START.test(run[0])) {
        scanCjk(run[0], 0, (term) => cjk.push(term))
        continue
      }
      const lower = run[0].toLowerCase()
      if (wordTerms(lower, detected).length === 0) continue
      const forms = order.map((language) => ({ language, terms: wordTerms(lower, language) })).filter((form) => form.terms.length > 0)
      words.push({ text: lower.normalize("NFKC"), forms })
    }
  }
  // CJK terms are the same in every language.
  for (const term of new Set(cjk)) words.push({ text: term, forms: [{ terms: [term] }] })
  return words
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
