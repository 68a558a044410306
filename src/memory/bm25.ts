/**
 * BM25 over chunks, two ways with one formula: a wink-bm25-text-search model for the index
 * (in the worker), and a brute-force scorer for the few chunks that changed since the index
 * was built. The brute-force scorer reproduces wink's scoring and takes the corpus statistics
 * from the index, so scores from both are comparable and can be merged.
 */
import bm25 from "wink-bm25-text-search"
import { detectLanguage, LANGUAGE_CODES, type LanguageCode } from "./language.ts"
import type { Chunk } from "./notes.ts"
import { terms } from "./text.ts"
import { languageBit, Vocabulary } from "./vocabulary.ts"

// wink's defaults, written out because the brute-force scorer must use the same ones.
const K1 = 1.2
const B = 0.75
const K = 1
/** wink refuses to consolidate fewer documents than this. */
const WINK_MIN_DOCS = 3

export interface TermChunk extends Chunk {
  language: LanguageCode
  tf: Map<string, number>
  length: number
}

/** A chunk's language and terms: the index and the brute-force scorer analyse alike. */
export function analyse(text: string): { language: LanguageCode; terms: string[] } {
  const language = detectLanguage(text)
  return { language, terms: terms(text, language) }
}

export function withTerms(chunk: Chunk): TermChunk {
  const tf = new Map<string, number>()
  const { language, terms: all } = analyse(chunk.text)
  for (const term of all) tf.set(term, (tf.get(term) ?? 0) + 1)
  return { ...chunk, language, tf, length: all.length }
}

/** The vocabulary of chunks held whole (few, or changed since the index was built). */
export function vocabularyOf(chunks: readonly TermChunk[]): Vocabulary {
  const languages = new Map<string, number>()
  const counts = new Map<string, number>()
  for (const chunk of chunks) {
    const bit = languageBit(chunk.language)
    for (const term of chunk.tf.keys()) {
      languages.set(term, (languages.get(term) ?? 0) | bit)
      counts.set(term, (counts.get(term) ?? 0) + 1)
    }
  }
  return new Vocabulary(languages, (term) => counts.get(term) ?? 0)
}

/** What IDF and length normalisation need, for the terms of one query. */
export interface CorpusStats {
  docs: number
  length: number
  df: Record<string, number>
}

export interface ChunkFilter {
  /** Inclusive YYYY-MM-DD bounds on the chunk's date. */
  after?: string
  before?: string
  /** Sources to leave out: their indexed version is stale. */
  exclude?: ReadonlySet<string>
}

export function accepts(filter: ChunkFilter, chunk: Chunk): boolean {
  return (!filter.after || chunk.date >= filter.after) && (!filter.before || chunk.date <= filter.before) && !filter.exclude?.has(chunk.source)
}

export interface Scored {
  chunk: Chunk
  language: LanguageCode
  score: number
  /** A bit per query word the chunk matched (see Query), for telling notes about the same thing. */
  covers: number
  /** The same, for words matched as typed or by a compound part: not by a typo correction. */
  matches: number
}

/** A term of at least this weight (expand.ts WEIGHTS) is the word itself or part of it, not a correction. */
const MATCH_WEIGHT = 0.6

/** Query terms, with parallel weights (default all 1) and, per term, a bit per query word it stands for. */
export interface Query {
  terms: readonly string[]
  weights?: readonly number[]
  words?: readonly number[]
}

export function statsOf(chunks: readonly TermChunk[], queryTerms: readonly string[]): CorpusStats {
  const unique = [...new Set(queryTerms)]
  const counts = unique.map(() => 0)
  let length = 0
  // One pass over the chunks: for a brute-force index of thousands this is most of a search.
  for (const chunk of chunks) {
    length += chunk.length
    for (let i = 0; i < unique.length; i++) if (chunk.tf.has(unique[i]!)) counts[i]!++
  }
  const df: Record<string, number> = {}
  for (const [i, term] of unique.entries()) df[term] = counts[i]!
  return { docs: chunks.length, length, df }
}

export function combine(a: CorpusStats, b: CorpusStats): CorpusStats {
  const df = { ...a.df }
  for (const [term, n] of Object.entries(b.df)) df[term] = (df[term] ?? 0) + n
  return { docs: a.docs + b.docs, length: a.length + b.length, df }
}

/**
 * Brute-force BM25; like wink, a term repeated in the query counts again. `weights` scale each
 * query term's contribution: corrected and compound terms count less.
 */
export function rank(chunks: readonly TermChunk[], query: Query | readonly string[], stats: CorpusStats, filter: ChunkFilter, limit: number): Scored[] {
  const { terms: queryTerms, weights, words } = "terms" in query ? query : { terms: query }
  if (stats.docs === 0) return []
  const average = stats.length / stats.docs || 1
  const idf = new Map(Object.entries(stats.df).map(([term, n]) => [term, Math.log((stats.docs - n + 0.5) / (n + 0.5) + K)]))
  const top: Scored[] = []
  for (const chunk of chunks) {
    if (!accepts(filter, chunk)) continue
    const norm = K1 * (1 - B + (B * chunk.length) / average)
    let score = 0
    let covers = 0
    let matches = 0
    for (const [i, term] of queryTerms.entries()) {
      const f = chunk.tf.get(term)
      if (!f) continue
      const weight = weights?.[i] ?? 1
      score += weight * (idf.get(term) ?? 0) * ((f * (K1 + 1)) / (norm + f))
      covers |= words?.[i] ?? 0
      if (weight >= MATCH_WEIGHT) matches |= words?.[i] ?? 0
    }
    keepTop(top, { chunk, language: chunk.language, score, covers, matches }, limit)
  }
  return top
}

/** Inserts into `top` (best first, at most `limit` long) if the score is positive and high enough. */
function keepTop<T extends { score: number }>(top: T[], scored: T, limit: number): void {
  if (scored.score <= 0 || (top.length === limit && scored.score <= top[limit - 1]!.score)) return
  let at = top.length
  while (at > 0 && top[at - 1]!.score < scored.score) at--
  top.splice(at, 0, scored)
  if (top.length > limit) top.pop()
}

/**
 * The immutable index of one memory folder. wink builds the BM25 model (term statistics,
 * saturation, length normalisation, IDF, all folded into one weight per term and chunk by
 * consolidate()); queries then add up those weights through typed-array postings and keep a
 * bounded top list. wink's own search() does the same sums through sparse-object lookups and
 * sorts every matching chunk: ~1.1 ms against ~0.03 ms at 10,000 chunks, same top 5 (see
 * test/memory/bm25.test.ts, which checks the two agree).
 */
export class ChunkIndex {
  private readonly chunks: Chunk[]
  /** Per chunk, its index in LANGUAGE_CODES. */
  private readonly languages: Uint8Array
  /** Scored by brute force instead of through wink: below WINK_MIN_DOCS chunks, or when asked. */
  private readonly few?: TermChunk[]
  /** Per token, a bit per language it was indexed in (languageBit). */
  private readonly tokenLanguages = new Map<string, number>()
  private vocabularyOf?: Vocabulary
  private readonly tokens: Record<string, number> = {}
  /** Per token: the chunks that have it, and wink's weight of the token in each. */
  private readonly postings: Int32Array[] = []
  private readonly weights: Float32Array[] = []
  private readonly length: number = 0
  private readonly scores: Float64Array
  /** Marks which chunks the current search touched, without clearing an array per search. */
  private readonly touchedIn: Uint32Array
  private searches = 0
  private fewStats?: { key: string; stats: CorpusStats }

  /**
   * `bruteForce`: skip wink and score every chunk per search (tens of milliseconds at 10,000
   * chunks, against seconds for wink to build): a stand-in while the real index is built.
   */
  constructor(chunks: Chunk[], { bruteForce = false }: { bruteForce?: boolean } = {}) {
    this.chunks = chunks
    this.languages = new Uint8Array(chunks.length)
    this.scores = new Float64Array(bruteForce ? 0 : chunks.length)
    this.touchedIn = new Uint32Array(bruteForce ? 0 : chunks.length)
    if (bruteForce || chunks.length < WINK_MIN_DOCS) {
      this.few = chunks.map(withTerms)
      this.few.forEach((chunk, i) => (this.languages[i] = LANGUAGE_CODES.indexOf(chunk.language)))
      return
    }
    const engine = bm25()
    // Config first, then prep tasks: wink rejects them in the other order. Documents arrive
    // already split into terms.
    engine.defineConfig({ fldWeights: { body: 1 }, bm25Params: { k1: K1, b: B, k: K } })
    engine.definePrepTasks([(body: string[]) => body])
    for (const [i, chunk] of chunks.entries()) {
      const { language, terms: body } = analyse(chunk.text)
      this.languages[i] = LANGUAGE_CODES.indexOf(language)
      const bit = languageBit(language)
      for (const term of body) this.tokenLanguages.set(term, (this.tokenLanguages.get(term) ?? 0) | bit)
      engine.addDoc({ body }, i)
    }
    engine.consolidate()
    this.tokens = engine.getTokens()
    this.length = engine.getTotalCorpusLength()
    ;[this.postings, this.weights] = invert(engine.getDocs(), Object.keys(this.tokens).length)
  }

  get size(): number {
    return this.chunks.length
  }

  /** The indexed terms, for query expansion. */
  vocabulary(): Vocabulary {
    this.vocabularyOf ??= this.few ? vocabularyOf(this.few) : new Vocabulary(this.tokenLanguages, (term) => this.postingsOf(term)?.length ?? 0)
    return this.vocabularyOf
  }

  stats(queryTerms: readonly string[]): CorpusStats {
    if (this.few) {
      // A search asks for the statistics of its terms twice (to score, then to send along).
      const key = queryTerms.join(" ")
      if (this.fewStats?.key !== key) this.fewStats = { key, stats: statsOf(this.few, queryTerms) }
      return this.fewStats.stats
    }
    const df: Record<string, number> = {}
    for (const term of queryTerms) df[term] = this.postingsOf(term)?.length ?? 0
    return { docs: this.chunks.length, length: this.length, df }
  }

  /** Scores as rank() does. */
  search(query: Query | readonly string[], filter: ChunkFilter, limit: number): Scored[] {
    const { terms: queryTerms, weights: termWeights, words } = "terms" in query ? query : { terms: query }
    if (this.few) return rank(this.few, query, this.stats(queryTerms), filter, limit)
    const search = ++this.searches
    const touched: number[] = []
    for (const [t, term] of queryTerms.entries()) {
      const token = this.tokens[term]
      if (token === undefined) continue
      const ids = this.postings[token]!
      const weights = this.weights[token]!
      const scale = termWeights?.[t] ?? 1
      for (let i = 0; i < ids.length; i++) {
        const id = ids[i]!
        if (this.touchedIn[id] !== search) {
          this.touchedIn[id] = search
          this.scores[id] = 0
          touched.push(id)
        }
        this.scores[id] += scale * weights[i]!
      }
    }
    const top: Array<{ id: number; score: number }> = []
    for (const id of touched) if (accepts(filter, this.chunks[id]!)) keepTop(top, { id, score: this.scores[id]! }, limit)
    // Which words a chunk matched is worked out for the few top chunks only.
    return top.map(({ id, score }) => ({
      chunk: this.chunks[id]!,
      language: LANGUAGE_CODES[this.languages[id]!]!,
      score,
      ...(words ? this.coverage(id, queryTerms, words, termWeights) : { covers: 0, matches: 0 }),
    }))
  }

  private coverage(id: number, queryTerms: readonly string[], words: readonly number[], weights: readonly number[] | undefined): { covers: number; matches: number } {
    let covers = 0
    let matches = 0
    for (const [i, term] of queryTerms.entries()) {
      if (!includes(this.postingsOf(term), id)) continue
      covers |= words[i]!
      if ((weights?.[i] ?? 1) >= MATCH_WEIGHT) matches |= words[i]!
    }
    return { covers, matches }
  }

  private postingsOf(term: string): Int32Array | undefined {
    const token = this.tokens[term]
    return token === undefined ? undefined : this.postings[token]
  }
}

/** Postings are in chunk order, so membership is a binary search. */
function includes(ids: Int32Array | undefined, id: number): boolean {
  if (!ids) return false
  let low = 0
  let high = ids.length - 1
  while (low <= high) {
    const mid = (low + high) >> 1
    if (ids[mid] === id) return true
    if (ids[mid]! < id) low = mid + 1
    else high = mid - 1
  }
  return false
}

/** Turns wink's per-chunk weights (chunk → token → weight) into per-token postings. */
function invert(docs: Record<number, { freq: Record<number, number> }>, vocabulary: number): [Int32Array[], Float32Array[]] {
  const counts = new Int32Array(vocabulary)
  const size = Object.keys(docs).length
  for (let id = 0; id < size; id++) for (const token in docs[id]!.freq) counts[Number(token)]!++
  const postings = Array.from(counts, (n) => new Int32Array(n))
  const weights = Array.from(counts, (n) => new Float32Array(n))
  const filled = new Int32Array(vocabulary)
  for (let id = 0; id < size; id++) {
    const freq = docs[id]!.freq
    for (const key in freq) {
      const token = Number(key)
      postings[token]![filled[token]!] = id
      weights[token]![filled[token]!++] = freq[token]!
    }
  }
  return [postings, weights]
}
