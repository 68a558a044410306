import bm25 from "wink-bm25-text-search"
import { describe, expect, it } from "vitest"
import { ChunkIndex, rank, statsOf, withTerms } from "../../src/memory/bm25.ts"
import type { Chunk } from "../../src/memory/notes.ts"
import { terms } from "../../src/memory/text.ts"

/** Pseudo-random but fixed text over a small vocabulary, so terms recur with varied frequency. */
function corpus(size: number): Chunk[] {
  const words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo"]
  let seed = 7
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
  return Array.from({ length: size }, (_, i) => ({
    source: `memory/2026-01-${String((i % 28) + 1).padStart(2, "0")}-n${i}.md`,
    date: `2026-01-${String((i % 28) + 1).padStart(2, "0")}`,
    text: Array.from({ length: 5 + Math.floor(next() * 40) }, () => words[Math.floor(next() ** 2 * words.length)]).join(" "),
  }))
}

const QUERIES = ["alpha", "romeo quebec", "india juliet kilo", "alpha alpha bravo", "papa oscar november mike", "zulu", "lima zulu"]

describe("ChunkIndex", () => {
  const chunks = corpus(300)
  const index = new ChunkIndex(chunks)

  it("ranks exactly like wink's own search", () => {
    const engine = bm25()
    engine.defineConfig({ fldWeights: { body: 1 } })
    engine.definePrepTasks([terms])
    chunks.forEach((chunk, i) => engine.addDoc({ body: chunk.text }, i))
    engine.consolidate()
    for (const query of QUERIES) {
      const ours = index.search(terms(query), {}, 10)
      const wink = engine.search(query, 10)
      expect(ours.map((hit) => hit.score), query).toEqual(wink.map(([, score]) => expect.closeTo(score, 3)))
      // Equal scores may come in another order: each chunk must have its score in wink too.
      const winkScores = new Map(engine.search(query, chunks.length).map(([id, score]) => [Number(id), score]))
      for (const hit of ours) expect(winkScores.get(chunks.indexOf(hit.chunk))).toBeCloseTo(hit.score, 3)
    }
  })

  it("scores like the brute-force scorer given the same statistics", () => {
    const all = chunks.map(withTerms)
    for (const query of QUERIES) {
      const queryTerms = terms(query)
      const brute = rank(all, queryTerms, statsOf(all, queryTerms), {}, 10)
      expect(brute.map((hit) => hit.score), query).toEqual(index.search(queryTerms, {}, 10).map((hit) => expect.closeTo(hit.score, 3)))
      expect(index.stats(queryTerms)).toEqual(statsOf(all, queryTerms))
    }
  })

  it("ranks, counts and filters the same by brute force (the stand-in while wink builds)", () => {
    const brute = new ChunkIndex(chunks, { bruteForce: true })
    const filter = { after: "2026-01-05", before: "2026-01-20", exclude: new Set([chunks[5]!.source]) }
    for (const query of QUERIES) {
      const queryTerms = terms(query)
      for (const f of [{}, filter]) {
        const ours = brute.search(queryTerms, f, 10)
        expect(ours.map((hit) => hit.score), query).toEqual(index.search(queryTerms, f, 10).map((hit) => expect.closeTo(hit.score, 3)))
      }
      expect(brute.stats(queryTerms)).toEqual(index.stats(queryTerms))
    }
  })

  it("filters by inclusive date bounds and excluded sources", () => {
    const hits = index.search(terms("alpha"), { after: "2026-01-10", before: "2026-01-12", exclude: new Set([chunks[10]!.source]) }, 50)
    expect(hits.length).toBeGreaterThan(0)
    for (const { chunk } of hits) {
      expect(chunk.date >= "2026-01-10" && chunk.date <= "2026-01-12").toBe(true)
      expect(chunk.source).not.toBe(chunks[10]!.source)
    }
    expect(new Set(hits.map((hit) => hit.chunk.date))).toEqual(new Set(["2026-01-10", "2026-01-11", "2026-01-12"]))
  })

  it("returns hits best first, at most `limit`, only with a positive score", () => {
    const hits = index.search(terms("india juliet"), {}, 5)
    expect(hits).toHaveLength(5)
    expect(hits.map((hit) => hit.score)).toEqual([...hits.map((hit) => hit.score)].sort((a, b) => b - a))
    expect(index.search(terms("zulu"), {}, 5)).toEqual([])
  })

  it.each([0, 1, 2, 3])("works with %i chunks (wink needs 3)", (size) => {
    const few = new ChunkIndex(corpus(size))
    const hits = few.search(terms("alpha bravo charlie delta echo"), {}, 5)
    expect(hits.length).toBe(corpus(size).filter((c) => /alpha|bravo|charlie|delta|echo/.test(c.text)).length)
    expect(few.stats(["alpha"]).docs).toBe(size)
  })
})
