/** `npm run steward -- memory reindex`: embeds every memory folder's notes again, now. */
import path from "node:path"
import type { Config } from "../config/config.ts"
import { embedderFor } from "./embedder.ts"
import { Memory } from "./memory.ts"

/** Returns the exit code; `out` and `err` take one line each. */
export async function reindexMemory(config: Config, out: (line: string) => void, err: (line: string) => void): Promise<number> {
  const embedder = embedderFor(config)
  if (!embedder) {
    err("steward: EMBEDDING_MODEL is not set, so there are no vectors to rebuild (lexical search keeps no index on disk)")
    return 1
  }
  const memory = new Memory({ dir: path.join(config.dataDir, "memory"), scope: config.memoryScope, embedder, onWarning: err })
  try {
    for (const info of await memory.reindex()) out(`${path.basename(info.folder)}: ${info.chunks} chunks embedded with ${embedder.model}, trusted ${info.trust.toFixed(2)}`)
    return 0
  } catch (error) {
    err(`steward: reindexing failed: ${error instanceof Error ? error.message : String(error)}`)
    return 1
  } finally {
    await memory.close()
  }
}
