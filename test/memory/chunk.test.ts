import { describe, expect, it } from "vitest"
import { chunkMarkdown, MAX_CHUNK_TOKENS } from "../../src/memory/chunk.ts"
import { countTokens } from "../../src/memory/text.ts"

describe("chunkMarkdown", () => {
  it("keeps a short note without headings whole", () => {
    expect(chunkMarkdown("Buy milk.\n\nAnd eggs.\n")).toEqual([{ text: "Buy milk.\n\nAnd eggs.", date: undefined }])
  })

  it("makes one chunk per heading section, heading included", () => {
    const chunks = chunkMarkdown("# Trip\n\nPlan the trip.\n\n## Hotel\n\nBook the hotel.\n")
    expect(chunks.map((c) => c.text)).toEqual(["# Trip\n\nPlan the trip.", "## Hotel\n\nBook the hotel."])
  })

  it("drops headings without text, unless the note is nothing else", () => {
    expect(chunkMarkdown("# Memory\n\n## 2026-11-20\n\nLikes tea.\n").map((c) => c.text)).toEqual(["## 2026-11-20\n\nLikes tea."])
    expect(chunkMarkdown("# Buy milk\n").map((c) => c.text)).toEqual(["# Buy milk"])
    expect(chunkMarkdown("")).toEqual([])
  })

  it("dates sections under a dated heading until the next dated or higher heading", () => {
    const chunks = chunkMarkdown(
      ["Intro.", "## 2026-11-20", "Tea.", "### Detail", "Green.", "## Aside", "Still the 20th.", "## 2026-11-21 later", "Coffee.", "# Other", "Undated."].join("\n\n"),
    )
    expect(chunks.map((c) => [c.text.split("\n")[0], c.date])).toEqual([
      ["Intro.", undefined],
      ["## 2026-11-20", "2026-11-20"],
      ["### Detail", "2026-11-20"],
      ["## Aside", "2026-11-20"],
      ["## 2026-11-21 later", "2026-11-21"],
      ["# Other", undefined],
    ])
  })

  it("does not take an impossible date or a longer number for a date", () => {
    expect(chunkMarkdown("## 2026-02-30\n\nx")[0]!.date).toBeUndefined()
    expect(chunkMarkdown("## 2026-11-201\n\nx")[0]!.date).toBeUndefined()
  })

  it("ignores headings inside code fences", () => {
    const chunks = chunkMarkdown("Script:\n\n```sh\n# not a heading\necho hi\n```\n")
    expect(chunks).toHaveLength(1)
  })

  it("splits a long section into chunks of at most MAX_CHUNK_TOKENS, each under its heading", () => {
    const paragraph = (n: number) => Array.from({ length: 150 }, (_, i) => `word${n}x${i}`).join(" ") + "."
    const markdown = `## Long\n\n${[1, 2, 3, 4, 5].map(paragraph).join("\n\n")}\n`
    const chunks = chunkMarkdown(markdown)
    expect(chunks.length).toBeGreaterThan(1)
    for (const chunk of chunks) {
      expect(chunk.text.startsWith("## Long\n\n")).toBe(true)
      expect(countTokens(chunk.text)).toBeLessThanOrEqual(MAX_CHUNK_TOKENS)
    }
    const words = chunks.flatMap((c) => c.text.replace("## Long", "").split(/\s+/).filter(Boolean))
    expect(words).toHaveLength(750)
  })

  it("splits an endless sentence and unspaced CJK text too", () => {
    for (const text of ["word ".repeat(1500), "天气很好".repeat(400)]) {
      const chunks = chunkMarkdown(text)
      expect(chunks.length).toBeGreaterThan(2)
      for (const chunk of chunks) expect(countTokens(chunk.text)).toBeLessThanOrEqual(MAX_CHUNK_TOKENS)
      expect(chunks.map((c) => c.text).join("").replace(/\s/g, "")).toBe(text.replace(/\s/g, ""))
    }
  })
})
