import { describe, expect, it } from "vitest"
import { folderName, MAX_SLUG_LENGTH, slugify } from "../../src/memory/slug.ts"

const SAFE_SLUG = /^[a-z0-9\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}ー]+(?:-[a-z0-9\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}ー]+)*$/u

describe("slugify", () => {
  it.each([
    ["Dentist appointment on Friday", "dentist-appointment-on-friday"],
    ["../../etc", "etc"],
    ["../../etc/passwd", "etc-passwd"],
    ["..", "note"],
    ["", "note"],
    ["   \n\t", "note"],
    ["🎉🎂🎈", "note"],
    ["Привет мир", "note"],
    ["Café Zürich, crème brûlée", "cafe-zurich-creme-brulee"],
    ["明天去北京开会", "明天去北京开会"],
    ["東京のラーメン屋", "東京のラーメン屋"],
    ["Use Python 3 for 备份脚本", "use-python-3-for-备份脚本"],
    ["C:\\Windows\\System32", "c-windows-system32"],
    ["Ｆｕｌｌ　ｗｉｄｔｈ", "full-width"],
    ["a/b\\c\u0000d", "a-b-c-d"],
  ])("%j → %j", (content, slug) => {
    expect(slugify(content)).toBe(slug)
  })

  it("cuts long content at a dash within the limit", () => {
    const slug = slugify("remember ".repeat(40))
    expect(slug.length).toBeLessThanOrEqual(MAX_SLUG_LENGTH)
    expect(slug).toMatch(/^remember(-remember)*$/)
  })

  it("cuts a single long word at the limit", () => {
    expect(slugify("x".repeat(200))).toBe("x".repeat(MAX_SLUG_LENGTH))
  })

  it("counts characters, so a CJK slug is cut at 48 characters, not bytes or UTF-16 units", () => {
    const slug = slugify("𠀀".repeat(60))
    expect(Array.from(slug)).toHaveLength(MAX_SLUG_LENGTH)
    expect(Buffer.byteLength(`2026-11-22-${slug}-999.md`)).toBeLessThan(255)
  })

  it("only ever yields a non-empty name of letters, digits and single inner dashes", () => {
    const nasty = ["/", "\\", ".", "...", "./.", "a/../b", "CON", "nul.txt", "-", "--a--", "a\u202Eb", "\u0000", "%2e%2e", "~/x", "a".repeat(1000) + "/b"]
    for (const content of nasty) {
      const slug = slugify(content)
      expect(slug, content).toMatch(SAFE_SLUG)
      expect(Array.from(slug).length).toBeLessThanOrEqual(MAX_SLUG_LENGTH)
    }
  })
})

describe("folderName", () => {
  it("writes the channel separator as a dash", () => {
    expect(folderName("telegram:1001")).toBe("telegram-1001")
    expect(folderName("slack:T1:U1")).toBe("slack-T1-U1")
  })

  it("gives different users different folders", () => {
    const users = ["a:b", "a-b", "a%2Db", "a/b", "a\\b", "a.b", "a b", "A:b", "a:b:", ".", "..", "a:é", "a:e\u0301", "a~b"]
    const names = users.map(folderName)
    expect(new Set(names).size).toBe(users.length)
    for (const name of names) {
      expect(name).toMatch(/^[A-Za-z0-9_%-]+$/)
      expect([".", ".."]).not.toContain(name)
    }
  })

  it("keeps very long ids short and still apart", () => {
    const a = folderName(`telegram:${"9".repeat(500)}1`)
    const b = folderName(`telegram:${"9".repeat(500)}2`)
    expect(a.length).toBeLessThanOrEqual(120)
    expect(a).not.toBe(b)
  })

  it("refuses an empty id", () => {
    expect(() => folderName("")).toThrow(/empty/)
  })
})
