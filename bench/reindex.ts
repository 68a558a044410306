/**
 * Search while a full re-embedding of 10,000 chunks runs (memory reindex), against a local
 * embedding model that does one call at a time: 20 ms for a query, 500 ms per 128 texts
 * (proportionally less for fewer). A search's time minus its query's own 20 ms is what the
 * user waits for Steward: behind indexing work, for the lexical and vector search, fusion.
 * The searches run for a while, then close() stops the re-embedding.
 */
import { setTimeout as sleep } from "node:timers/promises"
import { unit, type Embedder } from "../src/memory/embedder.ts"
import { Memory } from "../src/memory/memory.ts"
import { fakeEmbedding } from "../test/fakes/embeddings-server.ts"
import type { Figures } from "./figures.ts"

const USER = "bench:owner"
const QUERY_MS = 20
const BATCH_MS = 500
const BATCH_TEXTS = 128
const SEARCHES = 150
/** Between searches: a few users asking, not a flood. */
const PAUSE_MS = 30

/** A model on one device: calls wait for the one before them. `batches` counts indexing calls. */
function oneAtATime(): Embedder & { batches: number } {
  let device: Promise<unknown> = Promise.resolve()
  return {
    model: "bench:device",
    batches: 0,
    async embed(texts) {
      if (texts.length > 1) this.batches++
      const ms = texts.length === 1 ? QUERY_MS : (BATCH_MS * texts.length) / BATCH_TEXTS
      const turn = device.then(() => sleep(ms))
      device = turn
      await turn
      return texts.map((text) => unit(fakeEmbedding(text)))
    },
  }
}

/** `dir`: a memory folder root (scope shared) that already holds the notes. */
export async function benchSearchDuringReindex(figures: Figures, label: string, dir: string, queries: string[]): Promise<void> {
  const embedder = oneAtATime()
  const memory = new Memory({ dir, scope: "shared", rebuildThreshold: 1_000_000, embedder, onWarning: (message) => console.error(message) })
  try {
    await memory.rebuild(USER)
    const reindex = memory.reindex().catch(() => undefined)
    // Searches start once the notes have been read and batches are being embedded.
    while (embedder.batches < 2) await sleep(10)
    const waits: number[] = []
    for (let i = 0; i < SEARCHES; i++) {
      const start = performance.now()
      await memory.search(USER, { query: queries[i % queries.length]!, limit: 5 })
      waits.push(performance.now() - start - QUERY_MS)
      await sleep(PAUSE_MS)
    }
    if (embedder.batches * 32 >= 10_000) console.error("memory reindex bench: the re-embedding ended before the searches did")
    waits.sort((a, b) => a - b)
    figures.add("memory_search_p99_during_reindex_ms", waits[Math.min(waits.length - 1, Math.floor(0.99 * waits.length))]!, "ms", "<= 300")
    figures.add(`${label}_search_p50_during_reindex`, waits[Math.floor(waits.length / 2)]!, "ms")
    await memory.close()
    await reindex
  } finally {
    await memory.close()
  }
}
