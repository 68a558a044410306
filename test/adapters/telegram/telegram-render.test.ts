import { describe, expect, it } from "vitest"
import { TELEGRAM_LIMIT, renderTelegram, type Chunk } from "../../../adapters/telegram/render.ts"
import { checkRenderings, LONE_SURROGATE } from "../../support/markdown.ts"

const ALLOWED = new Set(["b", "i", "u", "s", "code", "pre", "a", "blockquote", "tg-spoiler"])

/** What makes `html` unacceptable as Telegram HTML: unknown or unbalanced tags, bad attributes, broken entities. */
function problems(html: string): string[] {
  const found: string[] = []
  const open: string[] = []
  for (const match of html.matchAll(/<(\/?)([^\s>]*)([^>]*)>|&(?!(?:amp|lt|gt|quot);)|[<>]/g)) {
    const [token, closing, name, attributes] = match
    if (name === undefined) {
      found.push(`stray ${JSON.stringify(token)} at ${match.index}`)
    } else if (!ALLOWED.has(name)) {
      found.push(`tag <${closing}${name}> at ${match.index}`)
    } else if (closing) {
      const top = open.pop()
      if (top !== name || attributes) found.push(`</${name}> closes <${top}> at ${match.index}`)
    } else {
      const valid = name === "a" ? /^ href="[^"<>]*"$/ : name === "code" && open.at(-1) === "pre" ? /^(?: class="language-[\w+#.-]+")?$/ : /^$/
      if (!valid.test(attributes)) found.push(`attributes ${JSON.stringify(attributes)} on <${name}> at ${match.index}`)
      if (open.includes(name)) found.push(`<${name}> nested in itself at ${match.index}`)
      open.push(name)
    }
  }
  if (open.length > 0) found.push(`unclosed ${open.join(", ")}`)
  return found
}

/** What Telegram shows for `html`: the text without tags, entities decoded. */
const textOf = (html: string) =>
  html.replace(/<[^>]*>/g, "").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&amp;/g, "&")

const squash = (text: string) => text.replace(/\s+/g, "")

/** Why `chunks` are not a valid rendering of `markdown`, if they are not. */
function violation(chunks: Chunk[], markdown: string, limit: number): string | undefined {
  for (const [n, chunk] of chunks.entries()) {
    const found = problems(chunk.html)
    if (chunk.html.length > limit) found.push(`${chunk.html.length} units, over ${limit}`)
    if (chunk.plain !== textOf(chunk.html)) found.push("plain is not the text of the html")
    if (!chunk.plain.trim()) found.push("blank")
    if (LONE_SURROGATE.test(chunk.html)) found.push("a split surrogate pair")
    if (/<[^/>]+><\//.test(chunk.html)) found.push("an empty element")
    if (found.length > 0) return `chunk ${n}: ${found.join("; ")} in ${JSON.stringify(chunk.html.slice(0, 200))}`
  }
  // Cuts may only drop whitespace: together the chunks hold the text of the unsplit rendering.
  const whole = renderTelegram(markdown, Number.POSITIVE_INFINITY).map((chunk) => chunk.plain).join("")
  if (squash(chunks.map((chunk) => chunk.plain).join("")) !== squash(whole)) return "the chunks lose or add text"
  return undefined
}

function checkChunks(chunks: Chunk[], markdown: string, limit = TELEGRAM_LIMIT): void {
  expect(violation(chunks, markdown, limit)).toBeUndefined()
}

function one(markdown: string): Chunk {
  const chunks = renderTelegram(markdown)
  checkChunks(chunks, markdown)
  expect(chunks).toHaveLength(1)
  return chunks[0]
}
const html = (markdown: string) => one(markdown).html

describe("renderTelegram: constructs", () => {
  it("keeps paragraphs and line breaks", () => {
    expect(html("first line\nsecond line\n\n\n\nnext paragraph")).toBe("first line\nsecond line\n\nnext paragraph")
  })

  it("renders bold, italic and strikethrough", () => {
    expect(html("**bold** and __bold__")).toBe("<b>bold</b> and <b>bold</b>")
    expect(html("*italic* and _italic_")).toBe("<i>italic</i> and <i>italic</i>")
    expect(html("~~gone~~")).toBe("<s>gone</s>")
    expect(html("***both***")).toBe("<b><i>both</i></b>")
    expect(html("*a **b** c*")).toBe("<i>a <b>b</b> c</i>")
  })

  it("leaves intraword underscores and spaced asterisks alone", () => {
    expect(html("call snake_case_name now")).toBe("call snake_case_name now")
    expect(html("2 * 3 * 4")).toBe("2 * 3 * 4")
  })

  it("renders inline code literally", () => {
    expect(html("run `a <b> & **c**`")).toBe("run <code>a &lt;b&gt; &amp; **c**</code>")
    expect(html("``has ` inside``")).toBe("<code>has ` inside</code>")
  })

  it("renders fenced code blocks, with and without a language", () => {
    expect(html("```python\nif a < b:\n    print('**x**')\n```")).toBe(`<pre><code class="language-python">if a &lt; b:\n    print('**x**')</code></pre>`)
    expect(html("~~~\nplain & simple\n~~~")).toBe("<pre>plain &amp; simple</pre>")
    expect(html("```\nnever closed\n\nstill code")).toBe("<pre>never closed\n\nstill code</pre>")
    // A language that is not a plain word is dropped rather than put into an attribute.
    expect(html('```"><script>\nx\n```')).toBe("<pre>x</pre>")
  })

  it("keeps an indented fence inside a list", () => {
    expect(html("1. run\n   ```sh\n   ls -la\n     indented\n   ```\n2. done")).toBe(
      `1. run\n<pre><code class="language-sh">ls -la\n  indented</code></pre>\n2. done`,
    )
  })

  it("renders links and escapes their URLs", () => {
    expect(html("see [the docs](https://example.com/a?b=1&c=2)")).toBe(`see <a href="https://example.com/a?b=1&amp;c=2">the docs</a>`)
    expect(html('[q](https://example.com/?q="x"<y>)')).toBe(`<a href="https://example.com/?q=&quot;x&quot;&lt;y&gt;">q</a>`)
    expect(html("[**bold** link](https://example.com/(a))")).toBe(`<a href="https://example.com/(a)"><b>bold</b> link</a>`)
    expect(html("[chat](tg://resolve?domain=x) [mail](mailto:a@b.c)")).toBe(`<a href="tg://resolve?domain=x">chat</a> <a href="mailto:a@b.c">mail</a>`)
  })

  it("shows links with unsafe or missing schemes as text", () => {
    const rendered = one("[click](javascript:alert(1)) [x](data:text/html,<b>) [rel](/etc/passwd)")
    expect(rendered.html).not.toContain("<a")
    expect(rendered.plain).toBe("[click](javascript:alert(1)) [x](data:text/html,<b>) [rel](/etc/passwd)")
  })

  it("renders headings as bold lines, without nesting bold", () => {
    expect(html("# Title\ntext\n\n### Sub **part** ###")).toBe("<b>Title</b>\ntext\n\n<b>Sub part</b>")
    expect(html("#hashtag")).toBe("#hashtag")
  })

  it("keeps list markers as text", () => {
    expect(html("Steps:\n- one\n* two _it_\n+ three\n  continued\n\n1. first\n2) second\n   - nested")).toBe(
      "Steps:\n- one\n* two <i>it</i>\n+ three\n  continued\n\n1. first\n2) second\n   - nested",
    )
  })

  it("renders blockquotes, flattening nested ones", () => {
    expect(html("> quoted **text**\n> second line\n\nafter")).toBe("<blockquote>quoted <b>text</b>\nsecond line</blockquote>\n\nafter")
    expect(html("> outer\n> > inner")).toBe("<blockquote>outer\ninner</blockquote>")
  })

  it("escapes exactly &, < and >", () => {
    expect(html("<script>alert('x')</script>")).toBe("&lt;script&gt;alert('x')&lt;/script&gt;")
    expect(html("a & b")).toBe("a &amp; b")
    expect(html("1 < 2 > 0")).toBe("1 &lt; 2 &gt; 0")
    expect(html('say "hi" &amp; bye')).toBe('say "hi" &amp;amp; bye')
  })

  it("keeps markup that does not pair up as literal text", () => {
    expect(html("this **never closes")).toBe("this **never closes")
    expect(html("a **b* c")).toBe("a *<i>b</i> c")
    expect(html("an ` alone and [half](link")).toBe("an ` alone and [half](link")
    expect(html("** spaced **")).toBe("** spaced **")
    expect(html("***")).toBe("***")
  })

  it("honours backslash escapes", () => {
    expect(html("\\*not italic\\* and \\`not code\\`")).toBe("*not italic* and `not code`")
  })

  it("gives no chunks for empty or blank input", () => {
    expect(renderTelegram("")).toEqual([])
    expect(renderTelegram(" \n\t\n  ")).toEqual([])
  })

  it("has plain text without any markup", () => {
    const { plain } = one("# Head\n**b** _i_ ~~s~~ `c` [l](https://x.y) a &amp; b\n> q\n```js\nx\n```")
    expect(plain).toBe("Head\nb i s c l a &amp; b\nq\nx")
    expect(plain).not.toMatch(/\*\*|<b>|~~/)
  })

  it("rejects limits too small to re-open tags", () => {
    expect(() => renderTelegram("x", 100)).toThrow(RangeError)
  })
})

describe("renderTelegram: splitting", () => {
  const sentence = (n: number) => `Sentence ${n} has **bold**, a & b, 1 < 2 and [a link](https://example.com/${n}).`

  it("splits a 10,000-character reply at paragraph boundaries", () => {
    // Paragraph n holds sentences n0, n1, … one per line, so a cut at a mere line break shows.
    const last = (n: number) => 2 + (n % 5)
    const paragraphs: string[] = []
    for (let n = 0; paragraphs.join("\n\n").length < 10_000; n++) {
      paragraphs.push(Array.from({ length: last(n) + 1 }, (_, k) => sentence(n * 10 + k)).join("\n"))
    }
    const markdown = paragraphs.join("\n\n")
    expect(markdown.length).toBeGreaterThanOrEqual(10_000)
    const chunks = renderTelegram(markdown)
    expect(chunks.length).toBeGreaterThanOrEqual(3)
    checkChunks(chunks, markdown)
    for (const chunk of chunks) {
      const [, number] = /Sentence (\d+) [^\n]*$/.exec(chunk.plain) ?? []
      expect(Number(number) % 10).toBe(last(Math.floor(Number(number) / 10)))
    }
  })

  it("cuts at line ends, else at spaces, closing and re-opening formatting across the cut", () => {
    const words = Array.from({ length: 1200 }, (_, n) => `word${n}`).join(" ")
    const chunks = renderTelegram(`**${words}**`)
    expect(chunks.length).toBeGreaterThan(1)
    checkChunks(chunks, `**${words}**`)
    for (const chunk of chunks) {
      expect(chunk.html).toMatch(/^<b>word\d+( word\d+)*<\/b>$/)
    }
    const lines = Array.from({ length: 600 }, (_, n) => `line ${n} of the reply`).join("\n")
    for (const chunk of renderTelegram(lines)) expect(chunk.plain).toMatch(/^line \d+ [^]*of the reply$/)
  })

  it("splits a long code block into several pre chunks at line ends", () => {
    const lines = Array.from({ length: 500 }, (_, n) => `    const value${n} = compute(${n}) && a < b // keep`)
    const markdown = `Here:\n\n\`\`\`ts\n${lines.join("\n")}\n\`\`\`\n\nDone.`
    const chunks = renderTelegram(markdown)
    checkChunks(chunks, markdown)
    const code = chunks.filter((chunk) => chunk.html.includes("<pre>"))
    expect(code.length).toBeGreaterThanOrEqual(4)
    for (const chunk of code) {
      expect(chunk.html).toMatch(/^<pre><code class="language-ts">[^]*<\/code><\/pre>/)
      expect(chunk.html.length).toBeLessThanOrEqual(TELEGRAM_LIMIT)
    }
    // Cut between lines, with each line's indentation intact.
    const shown = chunks.flatMap((chunk) => chunk.plain.split("\n")).filter((line) => line.includes("const"))
    expect(shown).toEqual(lines)
  })

  it("cuts runs without spaces hard, but never inside an entity or a surrogate pair", () => {
    for (const run of ["x".repeat(10_000), "&<>".repeat(3000), "😀".repeat(5000), `a${"😀".repeat(3000)}`]) {
      const chunks = renderTelegram(run)
      expect(chunks.length).toBeGreaterThan(1)
      checkChunks(chunks, run)
      expect(chunks.map((chunk) => chunk.plain).join("")).toBe(run)
    }
  })

  it("shows a link too long to re-open after a cut as text", () => {
    const link = `[long](https://example.com/${"a&".repeat(300)})`
    expect(renderTelegram(link)[0].html).toMatch(/^<a href=/)
    const chunks = renderTelegram(link, 2048)
    expect(chunks.map((chunk) => chunk.plain).join("")).toBe(link)
    for (const chunk of chunks) expect(chunk.html.length).toBeLessThanOrEqual(2048)
  })
})


const GENERATOR = {
  pieces: [
    "word", "reply", "Telegram", " ", " ", " ", "\n", "\n", "\n\n", "**", "*", "_", "__", "~~", "`", "``", "```", "```py\n", "\n```\n",
    "[", "]", "](", ")", "(", "](https://example.com/?q=1&r=\"2\")", "](javascript:alert(1))", "<", ">", "<b>", "</i>", "&", "&amp;", "&lt",
    '"', "\\", "😀", "👍🏽", "中文字符", "日本語", "# ", "> ", "- ", "1. ", "    ", "\t",
  ],
  floods: ["x", "😀", "&", "中", "*", "`"],
}

describe("renderTelegram: property", () => {
  it("always yields bounded, well-formed chunks that keep the whole text", () => {
    const limits = [TELEGRAM_LIMIT, TELEGRAM_LIMIT, 512, 900, 2000]
    checkRenderings(renderTelegram, violation, GENERATOR, limits)
  })
})
