/**
 * Retrieval quality on the project's own retrieval set (test/support/retrieval): recall@5 of
 * the lexical search without paraphrase queries, the current fact at rank 1, German and typo
 * queries. The suite holds the same figures (test/memory/retrieval.test.ts).
 *
 *   npx tsx bench/retrieval.ts [--json]
 */
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { Memory } from "../src/memory/memory.ts"
import { figuresOf, runQueries, writeSet } from "../test/support/retrieval/run.ts"
import { Figures } from "./figures.ts"

export async function runRetrievalBench(figures: Figures): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "steward-retrieval-bench-"))
  const memory = new Memory({ dir, scope: "user" })
  try {
    await writeSet(memory)
    const lexical = figuresOf(await runQueries(memory))
    figures.add("memory_recall_at5", lexical.recallAt5, "ratio", ">= 0.9")
    figures.add("memory_current_fact_at1", lexical.currentFactAt1, "ratio", ">= 0.9")
    figures.add("memory_recall_at5_de", lexical.recallAt5De, "ratio", ">= 0.8")
    figures.add("memory_recall_at5_typo", lexical.recallAt5Typo, "ratio", ">= 0.8")
  } finally {
    await memory.close()
    await rm(dir, { recursive: true, force: true })
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await runRetrievalBench(new Figures(process.argv.includes("--json")))
  process.exit(0)
}
