import { describe, expect, it } from "vitest"
import { MAX_SNIPPET, snippet } from "../../src/memory/snippet.ts"
import { terms } from "../../src/memory/text.ts"

const wanted = (query: string) => new Set(terms(query))
const filler = (n: number) => Array.from({ length: n }, (_, i) => `filler${i}`).join(" ")

describe("snippet", () => {
  it("returns short text whole", () => {
    expect(snippet("Dentist on Friday", wanted("dentist"))).toBe("Dentist on Friday")
  })

  it("cuts long text around the match, verbatim, with ellipses where cut", () => {
    const text = `${filler(100)} The dentist appointment is on Friday. ${filler(100)}`
    const cut = snippet(text, wanted("dentist friday"))
    expect(cut.length).toBeLessThanOrEqual(MAX_SNIPPET)
    expect(cut).toMatch(/^….*…$/s)
    expect(cut).toContain("The dentist appointment is on Friday.")
    expect(text).toContain(cut.slice(1, -1))
    // No word is cut in half.
    expect(cut.slice(1, -1)).toMatch(/^filler\d+ .* filler\d+$/)
  })

  it("prefers the passage where most query terms meet", () => {
    const text = `dentist ${filler(80)} the dentist said Friday at noon ${filler(80)} Friday`
    expect(snippet(text, wanted("dentist friday"))).toContain("the dentist said Friday at noon")
  })

  it("starts at the beginning when nothing matches", () => {
    const cut = snippet(filler(200), wanted("absent"))
    expect(cut.startsWith("filler0 ")).toBe(true)
    expect(cut.endsWith("…")).toBe(true)
  })

  it("cuts CJK text without splitting a character", () => {
    const text = `${"天气很好".repeat(100)}明天开会讨论预算${"天气很好".repeat(100)}`
    const cut = snippet(text, wanted("预算"))
    expect(cut.length).toBeLessThanOrEqual(MAX_SNIPPET)
    expect(cut).toContain("明天开会讨论预算")
  })
})
