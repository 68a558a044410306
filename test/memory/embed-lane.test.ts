import { setImmediate as nextTurn } from "node:timers/promises"
import { describe, expect, it } from "vitest"
import { EmbedLane, INDEX_BATCH } from "../../src/memory/embed-lane.ts"
import type { Embedder } from "../../src/memory/embedder.ts"
import { eventually } from "../support/wait-for.ts"

/** An embedder whose calls the test answers one by one. */
function answeredByHand(): Embedder & { calls: Array<{ texts: string[]; answer: () => void }> } {
  const calls: Array<{ texts: string[]; answer: () => void }> = []
  return {
    model: "by-hand",
    calls,
    embed: (texts) => new Promise((resolve) => calls.push({ texts, answer: () => resolve(texts.map(() => Float32Array.of(1))) })),
  }
}

describe("search first, indexing after", () => {
  it("sends a query at once, holds indexing while it is embedded, and indexes in small batches", async () => {
    const embedder = answeredByHand()
    const lane = new EmbedLane(embedder)
    const indexing = lane.index(Array.from({ length: 100 }, (_, i) => `note ${i}`))
    await eventually(() => embedder.calls.length === 1, "the first batch sent")
    expect(embedder.calls[0]!.texts).toHaveLength(INDEX_BATCH)

    const query = lane.query(["dentist"])
    expect(embedder.calls.map((call) => call.texts.length)).toEqual([INDEX_BATCH, 1])
    embedder.calls[0]!.answer()
    // The batch is done, the query is not: no next batch yet.
    for (let i = 0; i < 5; i++) await nextTurn()
    expect(embedder.calls).toHaveLength(2)
    embedder.calls[1]!.answer()
    expect(await query).toHaveLength(1)

    for (let sent = 3; sent <= 5; sent++) {
      await eventually(() => embedder.calls.length === sent, `batch ${sent - 1} sent`)
      embedder.calls[sent - 1]!.answer()
    }
    expect(await indexing).toHaveLength(100)
    expect(embedder.calls.map((call) => call.texts.length)).toEqual([INDEX_BATCH, 1, INDEX_BATCH, INDEX_BATCH, 100 - 3 * INDEX_BATCH])
  })

  it("stops indexing when aborted while a query holds it", async () => {
    const embedder = answeredByHand()
    const lane = new EmbedLane(embedder)
    const stop = new AbortController()
    const query = lane.query(["q"])
    const indexing = lane.index(["a", "b"], stop.signal)
    stop.abort()
    embedder.calls[0]!.answer()
    await query
    await expect(indexing).rejects.toThrow()
    expect(embedder.calls).toHaveLength(1)
  })
})
