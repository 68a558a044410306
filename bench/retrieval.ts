/**
 * Retrieval quality on the project's own retrieval set (test/support/retrieval): recall@5 of
 * the lexical search without paraphrase queries, the current fact at rank 1, German and typo
 * queries, date windows; then hybrid search on 127.0.0.1 with three embedders — a good one
 * (concepts), a meaning-free one (hashed character trigrams) and a random one — over every
 * query: how each does against words alone on its worst kind of query, and, with the good
 * one, paraphrases. The suite holds the same figures (test/memory/retrieval.test.ts). Then the
 * held-out set (test/support/retrieval/heldout.ts), written without looking at facts.ts's word
 * lists: the current fact first, lexical and hybrid with the good embedder.
 *
 *   npx tsx bench/retrieval.ts [--json]
 */
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { Memory } from "../src/memory/memory.ts"
import { startEmbeddingsServer } from "../test/fakes/embeddings-server.ts"
import { hybridMemory } from "../test/support/retrieval/hybrid.ts"
import { QUERIES } from "../test/support/retrieval/queries.ts"
import { heldOutFigures, runHeldOut, writeHeldOut } from "../test/support/retrieval/heldout-run.ts"
import { EMBEDDERS, figuresOf, runQueries, worstKind, writeSet } from "../test/support/retrieval/run.ts"
import { Figures } from "./figures.ts"

const POOR_MODELS = ["fake-random-384", "fake-random-768", "fake-tiny", "fake-constant", "fake-shuffled", "fake-english-only"]

export async function runRetrievalBench(figures: Figures): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "steward-retrieval-bench-"))
  const server = await startEmbeddingsServer()
  const memory = new Memory({ dir, scope: "user" })
  try {
    await writeSet(memory)
    const lexical = figuresOf(await runQueries(memory, QUERIES.filter((query) => query.kind !== "paraphrase")))
    figures.add("memory_recall_at5", lexical.recallAt5, "ratio", ">= 0.9")
    figures.add("memory_current_fact_at1", lexical.currentFactAt1, "ratio", ">= 0.9")
    figures.add("memory_recall_at5_de", lexical.recallAt5De, "ratio", ">= 0.8")
    figures.add("memory_recall_at5_typo", lexical.recallAt5Typo, "ratio", ">= 0.8")
    figures.add("memory_recall_at5_window", lexical.recallAt5Window, "ratio", ">= 1")
    const worst: number[] = []
    for (const [name, model] of Object.entries(EMBEDDERS)) {
      const hybrid = hybridMemory(server, { dir, model, onWarning: (message) => console.error(message) })
      try {
        await hybrid.reindex()
        const fused = figuresOf(await runQueries(hybrid))
        if (model === EMBEDDERS.concepts) {
          figures.add("memory_recall_at5_hybrid", fused.recallAt5All, "ratio", ">= 0.9")
          figures.add("memory_recall_at5_paraphrase_hybrid", fused.recallAt5Paraphrase, "ratio", ">= 0.8")
          figures.add("memory_current_fact_at1_hybrid", fused.currentFactAt1, "ratio", ">= 0.9")
          figures.add("memory_recall_at5_window_hybrid", fused.recallAt5Window, "ratio", ">= 1")
        } else figures.add(`memory_current_fact_at1_hybrid_${name}`, fused.currentFactAt1, "ratio", ">= 0.9")
        worst.push(worstKind(lexical, fused))
        figures.add(`memory_hybrid_minus_lexical_worst_kind_${name}`, worst.at(-1)!, "ratio", ">= 0")
      } finally {
        await hybrid.close()
      }
    }
    figures.add("memory_hybrid_minus_lexical_worst_kind", Math.min(...worst), "ratio", ">= 0")
    // The other ways a model can be poor (test/fakes/embeddings-server.ts): never worse than words alone either.
    for (const model of POOR_MODELS) {
      const hybrid = hybridMemory(server, { dir, model, onWarning: (message) => console.error(message) })
      try {
        await hybrid.reindex()
        figures.add(`memory_hybrid_minus_lexical_worst_kind_${model.replace(/^fake-/, "").replace(/-/g, "_")}`, worstKind(lexical, figuresOf(await runQueries(hybrid))), "ratio", ">= 0")
      } finally {
        await hybrid.close()
      }
    }
    await benchHeldOut(figures, join(dir, "heldout"), server.url)
  } finally {
    await memory.close()
    await server.close()
    await rm(dir, { recursive: true, force: true })
  }
}

/** The held-out set: current fact first, lexical and with the good embedder, overall and by kind of case. */
async function benchHeldOut(figures: Figures, dir: string, url: string): Promise<void> {
  await writeHeldOut(dir)
  const lexical = heldOutFigures(await runHeldOut(dir, (root) => new Memory({ dir: root, scope: "shared" }), { embedded: false }))
  figures.add("memory_heldout_current_fact_at1", lexical.all, "ratio", ">= 0.9")
  for (const [kind, share] of Object.entries(lexical.byKind)) figures.add(`memory_heldout_current_fact_at1_${kind.replace("-", "_")}`, share, "ratio")
  const hybrid = heldOutFigures(await runHeldOut(dir, (root) => hybridMemory({ url }, { dir: root, scope: "shared", onWarning: (message) => console.error(message) }), { embedded: true }))
  figures.add("memory_heldout_current_fact_at1_hybrid", hybrid.all, "ratio", ">= 0.9")
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await runRetrievalBench(new Figures(process.argv.includes("--json")))
  process.exit(0)
}
