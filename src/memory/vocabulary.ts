/**
 * The terms an index holds, with the languages they were indexed in and how many chunks have
 * them: what query expansion (expand.ts) checks words against. Typo candidates within one edit
 * come from a SymSpell-style deletion index (each term and its one-letter deletions); within
 * two edits (long words only) from the terms of about the same length, each compared by edit
 * distance (a two-deletion index would hold tens of keys per long term). Compound parts come
 * from the terms sorted forwards and backwards. Each structure is built on first use.
 */
import { distance } from "fastest-levenshtein"
import { LANGUAGE_CODES, type LanguageCode } from "./language.ts"

export const languageBit = (language: LanguageCode) => 1 << LANGUAGE_CODES.indexOf(language)

/** A term that typo matching leaves alone: short, or with digits (numbers, codes, dates). */
const UNCORRECTABLE = /\d|^.{0,3}$/

export interface Near {
  term: string
  distance: number
}

export class Vocabulary {
  private deletions?: Map<string, string[]>
  private byLength?: string[][]
  private forwards?: string[]
  private backwards?: string[]

  /**
   * `languages`: per term, a bit per language (languageBit) it was indexed in.
   * `frequency`: in how many chunks a term occurs.
   */
  constructor(
    private readonly languages: ReadonlyMap<string, number>,
    private readonly frequency: (term: string) => number,
  ) {}

  get size(): number {
    return this.languages.size
  }

  /** The term is indexed, in `language` when given. */
  has(term: string, language?: LanguageCode): boolean {
    const mask = this.languages.get(term)
    return mask !== undefined && (language === undefined || (mask & languageBit(language)) !== 0)
  }

  /** Indexed terms within `maxDistance` edits of `term` (1 or 2), the nearest ones, most frequent first. */
  near(term: string, maxDistance: number, limit: number): Near[] {
    if (UNCORRECTABLE.test(term)) return []
    let best: Near[] = []
    for (const candidate of maxDistance === 1 ? this.oneDeletionAway(term) : this.aboutAsLong(term, maxDistance)) {
      if (candidate === term) continue
      const d = distance(term, candidate)
      if (d > maxDistance || (best.length > 0 && d > best[0]!.distance)) continue
      if (best.length > 0 && d < best[0]!.distance) best = []
      best.push({ term: candidate, distance: d })
    }
    return best.sort((a, b) => this.frequency(b.term) - this.frequency(a.term)).slice(0, limit)
  }

  /** Every term within one edit of `term` shares a key with it (a substitution deletes the same letter on both sides). */
  private *oneDeletionAway(term: string): Iterable<string> {
    this.deletions ??= this.buildDeletions()
    const seen = new Set<string>()
    for (const key of deletes(term)) {
      for (const candidate of this.deletions.get(key) ?? []) {
        if (!seen.has(candidate)) yield candidate
        seen.add(candidate)
      }
    }
  }

  private *aboutAsLong(term: string, maxDistance: number): Iterable<string> {
    this.byLength ??= this.buildByLength()
    for (let length = Math.max(0, term.length - maxDistance); length <= term.length + maxDistance; length++) yield* this.byLength[length] ?? []
  }

  /**
   * Indexed terms of `language` that begin or end with `part` and are at least `extra` letters
   * longer: the compounds `part` is a head or modifier of (gutschein → kitagutschein), most
   * frequent first.
   */
  compoundsOf(part: string, language: LanguageCode, extra: number, limit: number): string[] {
    this.forwards ??= [...this.languages.keys()].sort()
    this.backwards ??= this.forwards.map(reverse).sort()
    const found = [...withPrefix(this.forwards, part), ...withPrefix(this.backwards, reverse(part)).map(reverse)]
    return found
      .filter((term) => term.length >= part.length + extra && this.has(term, language))
      .sort((a, b) => this.frequency(b) - this.frequency(a))
      .slice(0, limit)
  }

  private buildDeletions(): Map<string, string[]> {
    const index = new Map<string, string[]>()
    for (const term of this.languages.keys()) {
      if (UNCORRECTABLE.test(term)) continue
      for (const key of deletes(term)) {
        const list = index.get(key)
        if (list) list.push(term)
        else index.set(key, [term])
      }
    }
    return index
  }

  private buildByLength(): string[][] {
    const buckets: string[][] = []
    for (const term of this.languages.keys()) if (!UNCORRECTABLE.test(term)) (buckets[term.length] ??= []).push(term)
    return buckets
  }
}

/** `word` and every string made from it by deleting one character. */
function deletes(word: string): Set<string> {
  const out = new Set([word])
  for (let i = 0; i < word.length; i++) out.add(word.slice(0, i) + word.slice(i + 1))
  return out
}

function reverse(text: string): string {
  return Array.from(text).reverse().join("")
}

/** The entries of sorted `list` that start with `prefix`. */
function withPrefix(list: readonly string[], prefix: string): string[] {
  let low = 0
  let high = list.length
  while (low < high) {
    const mid = (low + high) >> 1
    if (list[mid]! < prefix) low = mid + 1
    else high = mid
  }
  const out: string[] = []
  for (let i = low; i < list.length && list[i]!.startsWith(prefix); i++) out.push(list[i]!)
  return out
}
