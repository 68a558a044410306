import type { EmbeddingModel } from "ai"
import { createOpenAI } from "@ai-sdk/openai"
import { createOpenAICompatible } from "@ai-sdk/openai-compatible"
import type { Config, ModelSpec } from "../config/config.ts"

/**
 * The AI SDK embedding model for EMBEDDING_MODEL, on the same provider settings (base URL, key)
 * as the chat models. loadConfig has refused providers without embeddings and missing keys.
 */
export function resolveEmbeddingModel(spec: ModelSpec, config: Config): EmbeddingModel {
  switch (spec.provider) {
    case "openai":
      return createOpenAI({ ...config.providers.openai }).embeddingModel(spec.id)
    case "openai-compatible": {
      const { baseURL, apiKey } = config.providers.openaiCompatible
      if (baseURL === undefined) throw new Error(`${spec.variable} uses openai-compatible but OPENAI_COMPATIBLE_BASE_URL is not set`)
      return createOpenAICompatible({ name: "openai-compatible", baseURL, apiKey }).embeddingModel(spec.id)
    }
    case "anthropic":
      throw new Error(`${spec.variable}: anthropic has no embedding models`)
  }
}
