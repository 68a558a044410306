import { describe, expect, it } from "vitest"
import { RECENCY_BAND, withRecency } from "../../src/memory/recency.ts"

const hit = (id: string, date: string, score: number) => ({ id, date, score })
const ids = (hits: Array<{ id: string }>) => hits.map((h) => h.id)

describe("withRecency", () => {
  it("puts the newer of about equally good matches first", () => {
    expect(ids(withRecency([hit("old", "2024-03-02", 10), hit("new", "2025-09-20", 9)]))).toEqual(["new", "old"])
  })

  it("leaves a clearly better older match first", () => {
    expect(ids(withRecency([hit("old", "2024-03-02", 10), hit("new", "2025-09-20", 10 * (1 - RECENCY_BAND) - 0.01)]))).toEqual(["old", "new"])
  })

  it("orders each group of near-equal scores by date, groups by score", () => {
    const hits = [hit("a", "2024-01-01", 10), hit("b", "2025-01-01", 8), hit("c", "2023-01-01", 5), hit("d", "2026-01-01", 4)]
    expect(ids(withRecency(hits))).toEqual(["b", "a", "d", "c"])
  })

  it("keeps the score order among notes of the same day", () => {
    expect(ids(withRecency([hit("x", "2025-01-01", 5), hit("y", "2025-01-01", 9), hit("z", "2025-01-01", 7)]))).toEqual(["y", "z", "x"])
  })
})
