/**
 * Hybrid search: lexical hits fused with vector hits by reciprocal-rank fusion. Vectors are
 * made in the background (after a write, at start, and now and then as notes change by hand),
 * one folder at a time, so embedding never holds up a turn; a search embeds its query once
 * and, when that fails or takes longer than the timeout, answers from the lexical hits alone
 * with a warning.
 */
import type { Scored } from "./bm25.ts"
import { EmbedLane } from "./embed-lane.ts"
import type { Embedder } from "./embedder.ts"
import type { LanguageCode } from "./language.ts"
import { sameStamp, statNote } from "./notes.ts"
import type { VectorStore } from "./vector-store.ts"
import { FolderVectors, type SyncInfo } from "./vectors.ts"

/**
 * Reciprocal-rank fusion's k: how much a top rank counts over the next. The usual 60 makes the
 * fused scores of the first twenty hits lie within 25% of each other, so the recency prior
 * (recency.ts), which reorders hits within 30%, sorted most of them by date. Measured on the
 * retrieval set with the fake embedder (recall@5 all queries / paraphrases / current fact@1):
 * k=60 0.905/0.750/0.917, k=20 0.929/0.917/0.917, k=10 0.940/1.000/0.917,
 * k=5 0.964/1.000/0.917, k=3 0.988/1.000/0.833, k=1 0.988/1.000/0.583.
 */
export const RRF_K = 5
/** Time a query's embedding may take before the search goes on without it. */
export const QUERY_TIMEOUT_MS = 3_000
/** A folder's vectors are brought up to date after a search at most this often. */
const REFRESH_EVERY_MS = 60_000

/** A search candidate; vector hits have no language (their snippet detects it) and cover no words. */
export type Candidate = Omit<Scored, "language"> & { language?: LanguageCode; fromVectors?: boolean }

export interface HybridOptions {
  embedder: Embedder
  store: VectorStore
  queryTimeoutMs?: number
  /** A failed or slow embedding, answered by lexical search alone. */
  onWarning: (message: string) => void
}

export class Hybrid {
  private readonly folders = new Map<string, FolderVectors>()
  private readonly synced = new Map<string, number>()
  /** Background syncs run one after another on this chain. */
  private queue: Promise<unknown> = Promise.resolve()
  private readonly waiting = new Set<string>()
  /** Aborts the background sync at close, so a provider that hangs cannot hold up a shutdown. */
  private readonly stop = new AbortController()

  /** Queries before indexing (embed-lane.ts). */
  private readonly lane: EmbedLane
  private readonly indexer: Embedder

  constructor(private readonly options: HybridOptions) {
    this.lane = new EmbedLane(options.embedder)
    this.indexer = this.lane.indexer()
  }

  /** Embeds `query`; undefined (with a warning) when the provider fails or is too slow. */
  async embedQuery(query: string): Promise<Float32Array | undefined> {
    const timeoutMs = this.options.queryTimeoutMs ?? QUERY_TIMEOUT_MS
    const deadline = AbortSignal.timeout(timeoutMs)
    try {
      // The race covers a provider that ignores the abort.
      const aborted = new Promise<never>((_, reject) => deadline.addEventListener("abort", () => reject(new Error(`no answer within ${timeoutMs} ms`)), { once: true }))
      const [vector] = await Promise.race([this.lane.query([query], deadline), aborted])
      return vector
    } catch (error) {
      this.options.onWarning(`memory: embedding the query failed (${error instanceof Error ? error.message : String(error)}); lexical results only`)
      return undefined
    }
  }

  /** Vector hits of `dir` for a query vector, within the inclusive YYYY-MM-DD bounds. */
  search(dir: string, vector: Float32Array, filter: { after?: string; before?: string }, limit: number): Candidate[] {
    this.refreshIfDue(dir)
    return this.folder(dir)
      .search(vector, filter, limit)
      .map(({ entry: { key: _key, ...chunk }, score }) => ({ chunk, score, covers: 0, matches: 0, fromVectors: true }))
  }

  /** How far `dir`'s vectors can be trusted (calibrate.ts): 0 until measured. */
  trust(dir: string): number {
    return this.folder(dir).trust
  }

  /** The vector hit's note is still the version it was embedded from; if not, its vectors are refreshed. */
  async isCurrent(dir: string, source: string): Promise<boolean> {
    const current = sameStamp(await statNote(dir, source), this.folder(dir).stampOf(source))
    if (!current) this.refresh(dir)
    return current
  }

  /** Brings `dir`'s vectors up to date in the background, after the syncs already queued. */
  refresh(dir: string): void {
    if (this.stop.signal.aborted || this.waiting.has(dir)) return
    this.waiting.add(dir)
    this.queue = this.queue.then(async () => {
      this.waiting.delete(dir)
      if (this.stop.signal.aborted) return
      this.synced.set(dir, Date.now())
      await this.folder(dir)
        .sync({ signal: this.stop.signal })
        .catch((error) => {
          if (!this.stop.signal.aborted) this.options.onWarning(`memory: embedding the notes of ${dir} failed (${error instanceof Error ? error.message : String(error)}); will try again`)
        })
    })
  }

  /** Embeds `dir` again from scratch, now (the `memory reindex` command); close() stops it. */
  reindex(dir: string): Promise<SyncInfo> {
    return this.folder(dir).sync({ force: true, signal: this.stop.signal })
  }

  /** Stops the background syncs: the running one is aborted (what it embedded is saved). */
  async close(): Promise<void> {
    this.stop.abort()
    await this.queue.catch(() => {})
  }

  private refreshIfDue(dir: string): void {
    if (Date.now() - (this.synced.get(dir) ?? 0) >= REFRESH_EVERY_MS) this.refresh(dir)
  }

  private folder(dir: string): FolderVectors {
    let folder = this.folders.get(dir)
    if (!folder) this.folders.set(dir, (folder = new FolderVectors(dir, this.indexer, this.options.store)))
    return folder
  }
}

/**
 * How much say the vector ranking gets in one search, 0–1: the model's trust on these notes
 * (calibrate.ts) times how much the words leave unanswered — the share of query words the best
 * lexical hit does not match (a word found only by a typo correction counts half: it is a guess). A question whose words one note all has is answered by words
 * alone: the vector ranking cannot make it worse. One that no note matches (a paraphrase) is
 * answered by the vectors as far as the model is trusted.
 */
export function vectorWeight(trust: number, lexical: readonly Candidate[], words: number): number {
  if (words === 0) return trust
  let best = 0
  for (const hit of lexical) best = Math.max(best, popcount(hit.matches) + CORRECTED * popcount(hit.covers & ~hit.matches))
  return trust * (1 - Math.min(best, words) / words)
}

/** A word matched only by a typo correction counts this much of a word matched as typed. */
const CORRECTED = 0.5

function popcount(bits: number): number {
  let count = 0
  for (let rest = bits >>> 0; rest; rest &= rest - 1) count++
  return count
}

/**
 * Weighted reciprocal-rank fusion: the lexical list adds (1 - weight) / (k + rank) for a chunk,
 * the vector list weight / (k + rank), so a chunk both rank high wins and a weight of 0 is the
 * lexical ranking. A chunk keeps its lexical fields (language, the words it covers).
 */
export function fuse(lexical: readonly Candidate[], vector: readonly Candidate[], weight = 0.5, k = RRF_K): Candidate[] {
  const fused = new Map<string, Candidate>()
  for (const [list, share] of [
    [lexical, 1 - weight],
    [vector, weight],
  ] as const) {
    list.forEach((hit, rank) => {
      const key = `${hit.chunk.source}\u0000${hit.chunk.text}`
      const known = fused.get(key)
      const score = share / (k + rank + 1)
      fused.set(key, known ? { ...known, score: known.score + score } : { ...hit, score })
    })
  }
  return [...fused.values()].filter((hit) => hit.score > 0)
}
