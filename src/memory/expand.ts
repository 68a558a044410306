/**
 * From the words of a query to the weighted terms that are searched, against the vocabulary
 * of an index. Per word, the first of its analyses (query language first) that the index knows
 * in that language is searched at full weight. A word the index does not know at all is
 * matched, at lower weights, to the parts of a compound (Kitagutschein → kita + gutschein) and
 * to terms within one edit (two from eight letters on). Exact terms always weigh more than
 * corrected ones, and a word the index knows is never corrected, so a note that has the word
 * as typed outranks one that only has a correction of it. In languages that compound, a known
 * word also finds the compounds it heads or starts (gutschein → kitagutschein), weighted down.
 */
import { LANGUAGES, type LanguageCode } from "./language.ts"
import type { QueryWord } from "./text.ts"
import type { Vocabulary } from "./vocabulary.ts"

export interface WeightedTerm {
  term: string
  weight: number
  /** A bit per query word (by index, the first 31) the term stands for. */
  words: number
}

export const WEIGHTS = {
  exact: 1,
  /** A part of a compound query word, or a compound that contains a query word. */
  compound: 0.6,
  /** A term one or two edits away from an unknown query word. */
  typo: [0, 0.5, 0.35],
}

/** Words of this many letters or more may be two edits off; shorter ones one. */
const ONE_EDIT_BELOW = 8
const MAX_CORRECTIONS = 3
const MAX_COMPOUNDS = 6
/** A compound part is at least this long, and a compound that long beyond the word it contains. */
const MIN_PART = 3
const MIN_COMPOUND_WORD = 4
/** Linking elements between compound parts, German's (Besichtigung-s-termin). */
const LINKS = ["", "s", "es", "n", "en", "e"]

export interface Expansion {
  terms: WeightedTerm[]
  /** Indexes of the words no analysis of which the vocabulary (or `known`) has. */
  unresolved: number[]
}

/** `known`: terms indexed elsewhere (the notes changed since the index was built). */
export function expandQuery(words: readonly QueryWord[], vocabulary: Vocabulary, known: ReadonlySet<string> = new Set()): Expansion {
  const terms = new Map<string, WeightedTerm>()
  const unresolved: number[] = []
  for (const [i, word] of words.entries()) {
    const add = (term: string, weight: number) => merge(terms, { term, weight, words: wordBit(i) })
    const form = word.forms.find((f) => f.terms.some((term) => known.has(term) || vocabulary.has(term, f.language)))
    if (form) {
      for (const term of form.terms) add(term, WEIGHTS.exact)
      if (form.language && LANGUAGES[form.language].compounds) for (const term of containing(form.terms, form.language, vocabulary)) add(term, WEIGHTS.compound)
    } else {
      unresolved.push(i)
      for (const { term, weight } of corrections(word, vocabulary)) add(term, weight)
    }
  }
  return { terms: [...terms.values()], unresolved }
}

export const wordBit = (index: number) => (index < 31 ? 1 << index : 0)

/** Adds `term` to `terms`: a term two words lead to keeps the higher weight and stands for both. */
export function merge(terms: Map<string, WeightedTerm>, term: WeightedTerm): void {
  const known = terms.get(term.term)
  terms.set(term.term, known ? { term: term.term, weight: Math.max(known.weight, term.weight), words: known.words | term.words } : term)
}

/**
 * The lower-weight matches of a word the index does not know, from each of its analyses: a
 * misspelt word's language is anyone's guess.
 */
export function corrections(word: QueryWord, vocabulary: Vocabulary): Array<Omit<WeightedTerm, "words">> {
  const out: Array<Omit<WeightedTerm, "words">> = []
  const maxDistance = Array.from(word.text).length >= ONE_EDIT_BELOW ? 2 : 1
  for (const { language, terms } of word.forms) {
    if (language && LANGUAGES[language].compounds) {
      for (const term of [...split(word.text, language, vocabulary), ...containing(terms, language, vocabulary)]) out.push({ term, weight: WEIGHTS.compound })
    }
    for (const near of vocabulary.near(terms[0]!, maxDistance, MAX_CORRECTIONS)) out.push({ term: near.term, weight: WEIGHTS.typo[near.distance]! })
  }
  return out
}

/** Compounds in the vocabulary that begin or end with one of `terms`. */
function containing(terms: readonly string[], language: LanguageCode, vocabulary: Vocabulary): string[] {
  return terms.filter((term) => term.length >= MIN_COMPOUND_WORD).flatMap((term) => vocabulary.compoundsOf(term, language, MIN_PART, MAX_COMPOUNDS))
}

/**
 * The stems of the two parts of `word` when both are indexed words (any language): the split
 * with the most even parts wins. Dictionary-free: the user's own notes are the dictionary.
 */
function split(word: string, language: LanguageCode, vocabulary: Vocabulary): string[] {
  const stem = (part: string) => LANGUAGES[language].stem(part)[0]!
  let best: { parts: string[]; shorter: number } | undefined
  for (let at = MIN_PART; at <= word.length - MIN_PART; at++) {
    const right = stem(word.slice(at))
    if (!vocabulary.has(right)) continue
    for (const link of LINKS) {
      const left = word.slice(0, at)
      if (!left.endsWith(link) || left.length - link.length < MIN_PART) continue
      const head = stem(left.slice(0, left.length - link.length))
      const shorter = Math.min(at - link.length, word.length - at)
      if (vocabulary.has(head) && (!best || shorter > best.shorter)) best = { parts: [head, right], shorter }
    }
  }
  return best?.parts ?? []
}
