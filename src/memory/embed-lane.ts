/**
 * Search first, indexing after: one embedder shared by the queries of searches and the
 * background work of embedding notes, with the queries going first. A query is sent at once,
 * whatever is being indexed; an indexing batch is sent only when no query is being embedded,
 * and holds at most INDEX_BATCH texts. A provider that does one call at a time (a local
 * model on one CPU or GPU) then makes a query wait for at most one small batch, not for a
 * 128-text one (at 500 ms per 128 texts: 125 ms instead of 500); a hosted API, which answers
 * calls side by side, sees the same texts in more, smaller requests.
 */
import type { Embedder } from "./embedder.ts"

/** Texts per indexing call. */
export const INDEX_BATCH = 32

export class EmbedLane {
  private queries = 0
  private waiting: Array<() => void> = []

  constructor(private readonly embedder: Embedder) {}

  get model(): string {
    return this.embedder.model
  }

  /** Embeds a search's query now. */
  async query(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    this.queries++
    try {
      return await this.embedder.embed(texts, signal)
    } finally {
      if (--this.queries === 0) for (const resume of this.waiting.splice(0)) resume()
    }
  }

  /** Embeds notes' texts in batches of INDEX_BATCH, each sent when no query is being embedded. */
  async index(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const vectors: Float32Array[] = []
    for (let i = 0; i < texts.length; i += INDEX_BATCH) {
      while (this.queries > 0) await new Promise<void>((resume) => this.waiting.push(resume))
      signal?.throwIfAborted()
      vectors.push(...(await this.embedder.embed(texts.slice(i, i + INDEX_BATCH), signal)))
    }
    return vectors
  }

  /** The indexing side, shaped as an embedder (for FolderVectors). */
  indexer(): Embedder {
    return { model: this.model, embed: (texts, signal) => this.index(texts, signal) }
  }
}
