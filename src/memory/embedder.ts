/** Turning text into vectors, through the AI SDK's embedMany. */
import { embedMany, type EmbeddingModel } from "ai"
import type { Config } from "../config/config.ts"
import { resolveEmbeddingModel } from "../model/embedding.ts"

export interface Embedder {
  /** What the vectors were made with: stored beside them, so a change of model re-embeds. */
  readonly model: string
  /** One unit-length vector per text, in order. */
  embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]>
}

/** Texts per embedMany call; the SDK splits further where a provider takes fewer per request. */
export const EMBED_BATCH = 128

export function aiEmbedder(model: EmbeddingModel, name: string): Embedder {
  return {
    model: name,
    async embed(texts, signal) {
      const { embeddings } = await embedMany({ model, values: texts, maxParallelCalls: 2, maxRetries: 1, abortSignal: signal })
      return embeddings.map(unit)
    },
  }
}

/** Scaled to length 1, so a dot product is the cosine similarity. */
export function unit(vector: readonly number[] | Float32Array): Float32Array {
  let norm = 0
  for (const x of vector) norm += x * x
  const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0
  return Float32Array.from(vector, (x) => x * scale)
}

/** EMBEDDING_MODEL's embedder, or none when it is not set. */
export function embedderFor(config: Config): Embedder | undefined {
  const spec = config.embeddingModel
  return spec && aiEmbedder(resolveEmbeddingModel(spec, config), `${spec.provider}:${spec.id}`)
}
