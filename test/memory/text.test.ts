import { describe, expect, it } from "vitest"
import { countTokens, terms, termSpans } from "../../src/memory/text.ts"

describe("terms", () => {
  it("lower-cases, drops English stop words and stems", () => {
    expect(terms("The meetings were running happily")).toEqual(["meet", "run", "happili"])
    expect(terms("meeting")).toEqual(terms("Meetings"))
    expect(terms("It's John's idea")).toEqual(["john", "idea"])
  })

  it("folds accents and full-width letters", () => {
    expect(terms("Café Zürich")).toEqual(terms("cafe zurich"))
    expect(terms("ＰＹＴＨＯＮ")).toEqual(["python"])
  })

  it("keeps numbers and mixed tokens", () => {
    expect(terms("Room 42 at 3pm")).toEqual(["room", "42", "3pm"])
  })

  it("yields nothing for stop words and punctuation only", () => {
    expect(terms("the a of, and... to!")).toEqual([])
    expect(terms("")).toEqual([])
  })

  it("turns Chinese into segmenter words and character bigrams", () => {
    const doc = terms("明天天气预报说会下雨")
    expect(doc).toEqual(expect.arrayContaining(["明天", "天气", "预报", "下雨"]))
    // The segmenter cuts 说明|天下|雨, but the bigram 明天 is still there for a query.
    expect(terms("说明天下雨")).toContain("明天")
  })

  it("segments Japanese and drops particles", () => {
    const doc = terms("私の猫はとても可愛いです")
    expect(doc).toEqual(expect.arrayContaining(["猫", "可愛い", "とても"]))
    expect(doc).not.toContain("の")
    expect(doc).not.toContain("は")
  })

  it("handles mixed scripts in one word", () => {
    expect(terms("我喜欢用Python写脚本")).toEqual(expect.arrayContaining(["python", "脚本", "喜欢"]))
  })

  it("prepares ASCII text the same way as any other text", () => {
    const text = "The quick brown foxes were jumping over 3 lazy dogs' houses; it's O'Neill's"
    expect([...terms(`${text} 猫`)]).toEqual([...terms(text), "猫"])
  })
})

describe("termSpans", () => {
  it("points at the words in the original text", () => {
    const text = "Meeting with Zoë, 明天 ＰＹ"
    for (const span of termSpans(text)) expect(terms(text.slice(span.start, span.end))).toContain(span.term)
  })
})

describe("countTokens", () => {
  it("counts words, and each CJK character", () => {
    expect(countTokens("hello world, again")).toBe(3)
    expect(countTokens("天气很好")).toBe(4)
    expect(countTokens("用Python写")).toBe(3)
  })
})
