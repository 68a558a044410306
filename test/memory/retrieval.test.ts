import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Memory } from "../../src/memory/memory.ts"
import { startEmbeddingsServer, type EmbeddingsServer } from "../fakes/embeddings-server.ts"
import { hybridMemory } from "../support/retrieval/hybrid.ts"
import { QUERIES } from "../support/retrieval/queries.ts"
import { EMBEDDERS, figuresOf, runQueries, worstKind, writeSet, type QueryResult, type SetFigures } from "../support/retrieval/run.ts"

/** The retrieval set against the lexical search: the figures bench/retrieval.ts reports. */
describe("retrieval set, lexical", () => {
  let dir: string
  let memory: Memory
  let results: QueryResult[]

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "steward-retrieval-"))
    memory = new Memory({ dir, scope: "user" })
    await writeSet(memory)
    results = await runQueries(memory, QUERIES.filter((query) => query.kind !== "paraphrase"))
  }, 120_000)

  afterAll(async () => {
    await memory.close()
    await rm(dir, { recursive: true, force: true })
  })

  it("meets the recall, current-fact, German and typo targets", () => {
    const figures = figuresOf(results)
    expect(figures.recallAt5).toBeGreaterThanOrEqual(0.9)
    expect(figures.currentFactAt1).toBeGreaterThanOrEqual(0.9)
    expect(figures.recallAt5De).toBeGreaterThanOrEqual(0.8)
    expect(figures.recallAt5Typo).toBeGreaterThanOrEqual(0.8)
    expect(figures.recallAt5Window).toBe(1)
  })

  it("never returns another user's notes", () => {
    expect(results.filter((r) => r.leaked).map((r) => r.query.query)).toEqual([])
  })

  it("keeps every hit inside the query's date window", () => {
    expect(results.filter((r) => r.outsideWindow).map((r) => r.query.query)).toEqual([])
  })
})

/** The whole set, paraphrases included, against hybrid search with each embedder on 127.0.0.1, on one folder. */
describe("retrieval set, hybrid", () => {
  let dir: string
  let server: EmbeddingsServer
  let lexical: SetFigures

  // Writing the set and embedding it three times is most of a minute on a busy machine.
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "steward-retrieval-hybrid-"))
    server = await startEmbeddingsServer()
    const words = new Memory({ dir, scope: "user" })
    await writeSet(words)
    lexical = figuresOf(await runQueries(words, QUERIES.filter((query) => query.kind !== "paraphrase")))
    await words.close()
  }, 120_000)

  afterAll(async () => {
    await server.close()
    await rm(dir, { recursive: true, force: true })
  })

  describe.each(Object.entries(EMBEDDERS))("with the %s embedder", (name, model) => {
    let memory: Memory
    let results: QueryResult[]
    const warnings: string[] = []

    beforeAll(async () => {
      memory = hybridMemory(server, { dir, model, onWarning: (message) => warnings.push(message) })
      await memory.reindex()
      results = await runQueries(memory)
    }, 120_000)

    afterAll(() => memory.close())

    it("is never worse than words alone on any kind of query, and keeps current facts first", () => {
      const figures = figuresOf(results)
      expect(worstKind(lexical, figures)).toBeGreaterThanOrEqual(0)
      expect(figures.currentFactAt1).toBeGreaterThanOrEqual(0.9)
      expect(figures.recallAt5Window).toBe(1)
      expect(warnings).toEqual([])
      // A good embedder also finds what shares no word with the question.
      if (name === "concepts") {
        expect(figures.recallAt5All).toBeGreaterThanOrEqual(0.9)
        expect(figures.recallAt5Paraphrase).toBeGreaterThanOrEqual(0.8)
      }
    })

    it("never returns another user's notes, and keeps vector hits inside the date window", () => {
      expect(results.filter((r) => r.leaked || r.outsideWindow).map((r) => r.query.query)).toEqual([])
    })
  })
})
