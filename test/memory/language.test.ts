import { describe, expect, it } from "vitest"
import { detectLanguage, LANGUAGES } from "../../src/memory/language.ts"
import { queryWords, terms } from "../../src/memory/text.ts"

describe("detectLanguage", () => {
  it("tells English from German and falls back to English for what it cannot place", () => {
    expect(detectLanguage("Our new home address is Hafenweg 12 in Hamburg")).toBe("en")
    expect(detectLanguage("Die Abholung der Kinder übernimmt dienstags die Oma")).toBe("de")
    expect(detectLanguage("dentst bill")).toBe("en")
    expect(detectLanguage("明天天气很好")).toBe("en")
  })

  it("does not ask the detector about plain ASCII without a single stop word: nothing to tell a language by", () => {
    expect(detectLanguage("brakousti velanor stikemal drouman")).toBe("en")
    expect(detectLanguage("Zahnarzttermin Hoffmann")).toBe("en")
    // One stop word, or a letter beyond ASCII, is enough to ask.
    expect(detectLanguage("Termin beim Zahnarzt")).toBe("de")
    expect(detectLanguage("Kita-Gutschein verlängern")).toBe("de")
  })
})

describe("German analysis", () => {
  it("stems with German Snowball, folds umlauts after stemming, drops German stop words", () => {
    expect(terms("Die Kinder und die Häuser", "de")).toEqual(["kind", "haus"])
    expect(terms("Schlüssel", "de")).toEqual(terms("Schlussel", "de"))
  })

  it("finds inflected verb forms by their base: abgeholt ~ Abholung ~ abholen, tropft ~ tropfen", () => {
    const shared = (a: string, b: string) => terms(a, "de").some((term) => terms(b, "de").includes(term))
    expect(shared("abgeholt", "Abholung")).toBe(true)
    expect(shared("abgeholt", "abholen")).toBe(true)
    expect(shared("Die Heizung tropft", "Heizungen tropfen")).toBe(true)
    expect(shared("gekündigt", "kündigen")).toBe(true)
    expect(shared("eingereicht", "einreichen")).toBe(true)
  })

  it("keeps the Snowball stem beside a participle's base, so a word that only looks like one still matches itself", () => {
    expect(terms("Gebiet", "de")).toContain(LANGUAGES.de.stem("gebiet")[0])
  })
})

describe("English analysis", () => {
  it("keeps Porter2 stems (as before languages were told apart)", () => {
    expect(terms("The meetings were running happily", "en")).toEqual(["meet", "run", "happili"])
    expect(LANGUAGES.en.stem("appointments")).toEqual(["appoint"])
  })
})

describe("queryWords", () => {
  it("analyses each word in every language, the query's own first, without its stop words", () => {
    const words = queryWords("Wann wird das Kind abgeholt")
    expect(words.map((word) => word.text)).toEqual(["kind", "abgeholt"])
    const [kind, abgeholt] = words
    expect(kind!.forms[0]).toEqual({ language: "de", terms: ["kind"] })
    expect(abgeholt!.forms.map((form) => form.language)).toEqual(["de", "en"])
    expect(abgeholt!.forms[0]!.terms).toEqual(["abgeholt", "abhol"])
    expect(queryWords("what is our home address").map((word) => word.text)).toEqual(["home", "address"])
  })

  it("keeps Chinese and Japanese terms language-free", () => {
    const words = queryWords("明天 meeting")
    expect(words.find((word) => word.text === "明天")!.forms).toEqual([{ terms: ["明天"] }])
  })
})

describe("English irregular verbs", () => {
  it("adds the verb of an irregular past form beside its stem: paid ~ pays, ran ~ running", () => {
    expect(terms("paid", "en")).toEqual(["paid", "pay"])
    expect(terms("pays", "en")).toEqual(["pay"])
    expect(terms("ran", "en")).toContain(terms("running", "en")[0])
  })
})
