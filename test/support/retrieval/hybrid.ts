/** A Memory with hybrid search against the fake embeddings server, configured as an operator would. */
import { loadConfig } from "../../../src/config/config.ts"
import { embedderFor } from "../../../src/memory/embedder.ts"
import { Memory, type MemoryOptions } from "../../../src/memory/memory.ts"
import type { EmbeddingsServer } from "../../fakes/embeddings-server.ts"

export function hybridMemory(server: Pick<EmbeddingsServer, "url">, options: Omit<MemoryOptions, "scope"> & { scope?: MemoryOptions["scope"]; model?: string }): Memory {
  const config = loadConfig({
    MODEL: "openai-compatible:chat",
    EMBEDDING_MODEL: `openai-compatible:${options.model ?? "fake-embed"}`,
    OPENAI_COMPATIBLE_BASE_URL: server.url,
  })
  return new Memory({ scope: "user", ...options, embedder: embedderFor(config) })
}
