import { describe, expect, it } from "vitest"
import { SLACK_LIMIT, renderSlack } from "../../../adapters/slack/render.ts"
import { checkRenderings, LONE_SURROGATE } from "../../support/markdown.ts"

/** What Slack would read as markup: a link or a mention in angle brackets. Ours are only links. */
const ANGLE = /<[^>]*>?|>/g
const LINK = /^<(?:https?:\/\/|mailto:)[^\s|<>]+\|[^<>]*>$/i

/** The content of parts with every mark character and all whitespace gone: splitting may only add or drop those. */
const content = (parts: string[]) => parts.join("").replace(/[*_~`>\s]/g, "")

/** Why `parts` are not a valid rendering of `markdown`, if they are not. */
function violation(parts: string[], markdown: string, limit: number): string | undefined {
  for (const [n, part] of parts.entries()) {
    const found: string[] = []
    if (part.length > limit) found.push(`${part.length} characters, over ${limit}`)
    if (!part.trim()) found.push("blank")
    if (/&(?!(?:amp|lt|gt);)/.test(part)) found.push("an unescaped &")
    // Outside links, < and > appear only escaped; a > at a line start is a quote.
    for (const match of part.matchAll(ANGLE)) {
      const quote = match[0] === ">" && (match.index === 0 || part[match.index - 1] === "\n") && part[match.index + 1] === " "
      if (!quote && !LINK.test(match[0])) found.push(`stray ${JSON.stringify(match[0].slice(0, 40))} at ${match.index}`)
    }
    if (LONE_SURROGATE.test(part)) found.push("a split surrogate pair")
    if (found.length > 0) return `part ${n}: ${found.join("; ")} in ${JSON.stringify(part.slice(0, 200))}`
  }
  if (content(parts) !== content(renderSlack(markdown, Number.POSITIVE_INFINITY))) return "the parts lose or add text"
  return undefined
}

function one(markdown: string): string {
  const parts = renderSlack(markdown)
  expect(violation(parts, markdown, SLACK_LIMIT)).toBeUndefined()
  expect(parts).toHaveLength(1)
  return parts[0]
}

describe("renderSlack: constructs", () => {
  it("renders bold, italic, strikethrough and both", () => {
    expect(one("**bold** and __bold__, *italic* and _italic_, ~~gone~~")).toBe("*bold* and *bold*, _italic_ and _italic_, ~gone~")
    expect(one("***both*** and *a **b** c*")).toBe("*_both_* and _a *b* c_")
  })

  it("leaves intraword underscores and spaced asterisks alone", () => {
    expect(one("call snake_case_name with 2 * 3 * 4")).toBe("call snake_case_name with 2 * 3 * 4")
  })

  it("turns links into Slack links with plain labels, escaping the URL", () => {
    expect(one("see [the **docs**](https://example.com/a?b=1&c=2) or [mail](mailto:a@b.c)")).toBe("see <https://example.com/a?b=1&amp;c=2|the docs> or <mailto:a@b.c|mail>")
    expect(one("[pipe](https://example.com/a|b>c)")).toBe("<https://example.com/a%7Cb%3Ec|pipe>")
    expect(one("[x](javascript:alert(1)) [rel](/etc/passwd)")).toBe("[x](javascript:alert(1)) [rel](/etc/passwd)")
  })

  it("renders headings as bold lines, without bold nested in them", () => {
    expect(one("# Title\ntext\n\n### Sub **part** ###")).toBe("*Title*\ntext\n\n*Sub part*")
  })

  it("keeps code literal and escaped, in spans and fenced blocks", () => {
    expect(one("run `a <b> & **c**`")).toBe("run `a &lt;b&gt; &amp; **c**`")
    expect(one("```python\nif a < b:\n    print('**x**')\n```\nafter")).toBe("```\nif a &lt; b:\n    print('**x**')\n```\nafter")
  })

  it("escapes exactly &, < and > in text", () => {
    expect(one("<@U123> & <!channel> 1 > 0")).toBe("&lt;@U123&gt; &amp; &lt;!channel&gt; 1 &gt; 0")
  })

  it("renders bullets as •, keeps numbers, and prefixes every quoted line", () => {
    expect(one("- one\n* two\n  - nested\n1. first\n\n> quoted **text**\n> second")).toBe("• one\n• two\n  • nested\n1. first\n\n> quoted *text*\n> second")
  })

  it("keeps markup that does not pair up as literal text", () => {
    // A literal backtick is kept apart by zero-width spaces, so Slack cannot pair it (issue 14).
    expect(one("this **never closes and an ` alone")).toBe("this **never closes and an \u200B`\u200B alone")
  })

  it("gives no parts for empty input", () => {
    expect(renderSlack(" \n\n ")).toEqual([])
  })
})

describe("renderSlack: splitting", () => {
  it("splits a 10,000-character reply at paragraph ends, every part within the limit", () => {
    const paragraphs = Array.from({ length: 110 }, (_, n) => `Paragraph ${n} says **something bold** & [links](https://example.com/${n}) too.\nIts second line.`)
    const markdown = paragraphs.join("\n\n")
    expect(markdown.length).toBeGreaterThanOrEqual(10_000)
    const parts = renderSlack(markdown)
    expect(parts.length).toBeGreaterThanOrEqual(4)
    expect(violation(parts, markdown, SLACK_LIMIT)).toBeUndefined()
    for (const part of parts) expect(part).toMatch(/^Paragraph \d+ [^]*Its second line\.$/)
  })

  it("closes and re-opens formatting cut by a split", () => {
    const words = Array.from({ length: 1200 }, (_, n) => `word${n}`).join(" ")
    const parts = renderSlack(`**${words}**`)
    expect(parts.length).toBeGreaterThan(1)
    for (const part of parts) expect(part).toMatch(/^\*word\d+( word\d+)*\*$/)
  })

  it("splits a long code block between lines, with fences on both sides of every cut", () => {
    const lines = Array.from({ length: 400 }, (_, n) => `    const value${n} = a < b && c // keep`)
    const markdown = `Here:\n\n\`\`\`ts\n${lines.join("\n")}\n\`\`\`\n\nDone.`
    const parts = renderSlack(markdown)
    expect(violation(parts, markdown, SLACK_LIMIT)).toBeUndefined()
    const code = parts.filter((part) => part.includes("```"))
    expect(code.length).toBeGreaterThanOrEqual(4)
    for (const part of code) expect(part).toMatch(/^(?:Here:\n\n)?```\n {4}const[^`]*\n```(?:\n\nDone\.)?$/)
    const shown = code.flatMap((part) => part.split("\n")).filter((line) => line.includes("const"))
    expect(shown).toEqual(lines.map((line) => line.replace("<", "&lt;").replace("&&", "&amp;&amp;")))
  })

  it("never cuts a link, an entity or a surrogate pair", () => {
    for (const run of ["&<>".repeat(3000), "😀".repeat(5000), Array.from({ length: 300 }, (_, n) => `[l${n}](https://example.com/${"p".repeat(n % 40)})`).join("")]) {
      const parts = renderSlack(run)
      expect(parts.length).toBeGreaterThan(1)
      expect(violation(parts, run, SLACK_LIMIT)).toBeUndefined()
    }
  })
})

const GENERATOR = {
  pieces: [
    "word", "reply", "Slack", " ", " ", " ", "\n", "\n", "\n\n", "**", "*", "_", "__", "~~", "`", "``", "```", "```py\n", "\n```\n",
    "[", "]", "](", ")", "(", "](https://example.com/?q=1&r=|2)", "](javascript:alert(1))", "<", ">", "<@U1>", "&", "&amp;",
    "|", "\\", "😀", "👍🏽", "中文字符", "# ", "> ", "- ", "1. ", "    ", "\t",
  ],
  floods: ["x", "😀", "&", "中", "*", "`", "> "],
}

describe("renderSlack: property", () => {
  it("always yields parts within the limit that keep the whole text", () => {
    const limits = [SLACK_LIMIT, SLACK_LIMIT, 1000, 1500, 2000]
    checkRenderings(renderSlack, violation, GENERATOR, limits)
  })
})
