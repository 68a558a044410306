/**
 * What hybrid search adds to a search at 10,000 chunks, the provider's time excluded: the
 * query is embedded in process (the fake embedder's vectors, or random ones of a production
 * model's size), the time spent inside the embedder is subtracted, and what remains is set
 * against the same query's lexical search. What is left is the vector scan, fusion, the recency
 * prior over the larger candidate list and checking vector hits' notes are current.
 */
import { Memory } from "../src/memory/memory.ts"
import { unit, type Embedder } from "../src/memory/embedder.ts"
import { FAKE_EMBEDDING_DIMS, fakeEmbedding } from "../test/fakes/embeddings-server.ts"
import { seededRandom } from "../test/support/random.ts"
import type { Figures } from "./figures.ts"

const USER = "bench:owner"
const WARM_UP = 30

/** An embedder in this process that keeps count of the time spent in it. */
function timedEmbedder(model: string, vector: (text: string) => number[]): Embedder & { spent: number } {
  return {
    model,
    spent: 0,
    async embed(texts) {
      const start = performance.now()
      const vectors = texts.map((text) => unit(vector(text)))
      this.spent += performance.now() - start
      return vectors
    },
  }
}

function randomVectors(dims: number): (text: string) => number[] {
  return (text) => {
    let seed = 0
    for (const char of text) seed = (seed * 31 + char.charCodeAt(0)) >>> 0
    const random = seededRandom(seed)
    return Array.from({ length: dims }, () => random() - 0.5)
  }
}

/** `dir`: a memory folder root (scope shared) that already holds the notes. */
export async function benchHybridOverhead(figures: Figures, label: string, dir: string, queries: string[]): Promise<void> {
  const sizes: Array<[string, number, (text: string) => number[], boolean]> = [
    ["", FAKE_EMBEDDING_DIMS, fakeEmbedding, true],
    ["_1536d", 1536, randomVectors(1536), false],
  ]
  for (const [suffix, dims, vector, targeted] of sizes) {
    const embedder = timedEmbedder(`bench:${dims}`, vector)
    const lexical = new Memory({ dir, scope: "shared", rebuildThreshold: 1_000_000 })
    const hybrid = new Memory({ dir, scope: "shared", rebuildThreshold: 1_000_000, embedder, onWarning: (message) => console.error(message) })
    try {
      await Promise.all([lexical.rebuild(USER), hybrid.rebuild(USER), hybrid.reindex()])
      const overheads: number[] = []
      for (const [i, query] of [...queries.slice(0, WARM_UP), ...queries].entries()) {
        let start = performance.now()
        await lexical.search(USER, { query, limit: 5 })
        const lexicalMs = performance.now() - start
        const spent = embedder.spent
        start = performance.now()
        await hybrid.search(USER, { query, limit: 5 })
        const hybridMs = performance.now() - start - (embedder.spent - spent)
        if (i >= WARM_UP) overheads.push(hybridMs - lexicalMs)
      }
      overheads.sort((a, b) => a - b)
      figures.add(`${label}_hybrid_overhead_p50${suffix}`, overheads[Math.floor(overheads.length / 2)]!, "ms", targeted ? "<= 5" : undefined)
    } finally {
      await Promise.all([lexical.close(), hybrid.close()])
    }
  }
}
