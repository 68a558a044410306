import { describe, expect, it } from "vitest"
import { vocabularyOf, withTerms } from "../../src/memory/bm25.ts"
import { expandQuery, WEIGHTS } from "../../src/memory/expand.ts"
import { queryWords } from "../../src/memory/text.ts"

const NOTES = [
  "The plumber fixes the bathroom sink on Wednesday.",
  "Paid the dentist bill for the crown.",
  "Kita-Gutschein für Mia muss beim Bezirksamt verlängert werden.",
  "Zahnarzttermin am 14. Dezember bei Dr. Hoffmann.",
  "Die Steuererklärung wurde mit Elster abgegeben.",
  "Room 42 code 3917, the bus leaves at 8.",
  "Running shoes are in the hallway.",
]
const vocabulary = vocabularyOf(NOTES.map((text, i) => withTerms({ source: `n${i}.md`, date: "2026-01-01", text })))
const expand = (query: string, known?: Set<string>) => new Map(expandQuery(queryWords(query), vocabulary, known).terms.map((t) => [t.term, t.weight]))

describe("expandQuery", () => {
  it("searches known words as they are, at full weight, and corrects nothing", () => {
    expect(expand("plumber sink")).toEqual(new Map([["plumber", 1], ["sink", 1]]))
  })

  it("matches an unknown word to terms within one edit, at a lower weight", () => {
    expect(expand("plumer")).toEqual(new Map([["plumber", WEIGHTS.typo[1]]]))
    expect(expand("dentst bill")).toEqual(new Map([["dentist", WEIGHTS.typo[1]], ["bill", 1]]))
    expect(WEIGHTS.typo[1]).toBeLessThan(WEIGHTS.exact)
  })

  it("allows two edits from eight letters on, one below", () => {
    expect(expand("Stuererklrung").get("steuererklar")).toBe(WEIGHTS.typo[2])
    expect(expand("plmbr").size).toBe(0)
  })

  it("leaves short words and numbers uncorrected", () => {
    expect(expand("rom").size).toBe(0)
    expect(expand("3918").size).toBe(0)
  })

  it("never corrects a word the changed notes know", () => {
    expect(expand("plumer", new Set(["plumer"])).has("plumber")).toBe(false)
  })

  it("splits an unknown German compound into indexed parts: Kitagutschein → kita + gutschein", () => {
    const terms = expand("Kitagutschein verlängern")
    expect(terms.get("kita")).toBe(WEIGHTS.compound)
    expect(terms.get("gutschein")).toBe(WEIGHTS.compound)
  })

  it("finds the compounds a German word begins or ends: Zahnarzt, Termin → zahnarzttermin", () => {
    expect(expand("Zahnarzt im Dezember").get("zahnarzttermin")).toBe(WEIGHTS.compound)
    expect(expand("Termin beim Arzt").get("zahnarzttermin")).toBe(WEIGHTS.compound)
  })

  it("picks per word the language the index knows it in", () => {
    // A German query word from an English note: its English stem is what the index has.
    expect(expand("Running").get("run")).toBe(1)
  })
})
