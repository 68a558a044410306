import { describe, expect, it } from "vitest"
import { factOf } from "../../src/memory/facts.ts"
import { RECENCY_BAND, withRecency } from "../../src/memory/recency.ts"

/** `covers`: a bit per query word matched; 0b11 = both words of a two-word query. */
const hit = (id: string, date: string, score: number, covers = 0b11) => ({ id, date, score, covers })
const ids = (hits: Array<{ id: string }>) => hits.map((h) => h.id)

describe("withRecency", () => {
  it("puts the newer of about equally good matches of the same words first", () => {
    expect(ids(withRecency([hit("old", "2024-03-02", 10), hit("new", "2025-09-20", 9)]))).toEqual(["new", "old"])
  })

  it("leaves a clearly better older match first", () => {
    expect(ids(withRecency([hit("old", "2024-03-02", 10), hit("new", "2025-09-20", 10 * (1 - RECENCY_BAND) - 0.01)]))).toEqual(["old", "new"])
  })

  it("does not move a newer note ahead of one that matches a query word it lacks", () => {
    expect(ids(withRecency([hit("old", "2024-03-02", 10, 0b11), hit("new", "2025-09-20", 9, 0b01)]))).toEqual(["old", "new"])
    expect(ids(withRecency([hit("old", "2024-03-02", 10, 0b01), hit("new", "2025-09-20", 9, 0b11)]))).toEqual(["new", "old"])
  })

  it("moves a newer note past every older near-equal one, and no further", () => {
    const hits = [hit("a", "2024-01-01", 10), hit("b", "2023-01-01", 9), hit("c", "2025-01-01", 8), hit("d", "2026-01-01", 4)]
    expect(ids(withRecency(hits))).toEqual(["c", "a", "b", "d"])
  })

  it("keeps the score order among notes of the same day", () => {
    expect(ids(withRecency([hit("x", "2025-01-01", 5), hit("y", "2025-01-01", 9), hit("z", "2025-01-01", 7)]))).toEqual(["y", "z", "x"])
  })

  it("moves a newer note ahead only when it is about the same person's same fact", () => {
    const about = (text: string) => factOf(text)
    const mine = { ...hit("mine", "2024-03-15", 10), fact: about("My address is 3 Rose Court, Bristol.") }
    const sisters = { ...hit("sisters", "2025-05-10", 10), fact: about("My sister Kate's new address is 77 Hill Road, Bath.") }
    expect(ids(withRecency([mine, sisters]))).toEqual(["mine", "sisters"])
    const vet = { ...hit("vet", "2024-05-05", 10), fact: about("Vet for Biscuit: Dr. Ruiz at PawCare.") }
    const appointment = { ...hit("appointment", "2025-06-06", 10), fact: about("Biscuit's vet appointment moved to Friday at 10.") }
    expect(ids(withRecency([vet, appointment]))).toEqual(["vet", "appointment"])
    const moved = { ...hit("moved", "2025-06-03", 10), fact: about("Address: 5 Elm Rd, Shelbyville") }
    expect(ids(withRecency([mine, moved]))).toEqual(["moved", "mine"])
  })
})
