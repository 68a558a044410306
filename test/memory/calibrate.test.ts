import { describe, expect, it } from "vitest"
import { PROBES, probesOf, trustOf } from "../../src/memory/calibrate.ts"
import { vectorWeight, type Candidate } from "../../src/memory/hybrid.ts"

const chunk = (text: string) => ({ source: "memory/2025-01-01-x.md", date: "2025-01-01", text })
const hit = (covers: number, matches: number): Candidate => ({ chunk: chunk("x"), score: 1, covers, matches })

describe("trust in an embedding model", () => {
  it("is 0 at chance, 1 when every probe is found, and 1 with too few notes to tell", () => {
    expect(trustOf(1, 32, 100)).toBeCloseTo(0, 2)
    expect(trustOf(32, 32, 100)).toBe(1)
    expect(trustOf(16, 32, 100)).toBeGreaterThan(0.4)
    expect(trustOf(0, 0, 3)).toBe(1)
  })

  it("probes a spread of chunks with a few words from their middle, Chinese too", () => {
    const chunks = Array.from({ length: 100 }, (_, i) => chunk(i % 2 ? `Note ${i}: bought apples pears plums cherries at the market` : `第${i}条：今天在市场买了苹果和梨`))
    const probes = probesOf(chunks)
    expect(probes).toHaveLength(PROBES)
    expect(new Set(probes.map((probe) => probe.row)).size).toBe(PROBES)
    expect(probes.find((probe) => probe.row % 2 === 1)!.text.split(" ")).toHaveLength(3)
    expect(Array.from(probes.find((probe) => probe.row % 2 === 0)!.text)).toHaveLength(4)
  })
})

describe("the vector ranking's say in a search", () => {
  it("is none when one note has every query word, and the model's trust when none has any", () => {
    expect(vectorWeight(0.8, [hit(0b11, 0b11)], 2)).toBe(0)
    expect(vectorWeight(0.8, [], 2)).toBe(0.8)
    expect(vectorWeight(0.8, [hit(0b01, 0b01)], 2)).toBeCloseTo(0.4)
    // A word found only by a typo correction is half answered.
    expect(vectorWeight(0.8, [hit(0b1, 0)], 1)).toBeCloseTo(0.4)
    expect(vectorWeight(0, [], 2)).toBe(0)
  })
})
