/** fast-check generators of model-written Markdown for the renderers' property tests. */
import fc from "fast-check"

/**
 * What the renderers may drop from the input's text: Markdown's syntax characters (emphasis,
 * code, link brackets, heading, quote and list markers, backslash escapes), all whitespace, a
 * fence line's info string (the language; Telegram shows it as the block's label, Slack has no
 * place for it), and `|` and `<`, which a Slack link URL carries percent-encoded (%7C, %3C).
 * Everything else must come out, in order.
 */
const SYNTAX = /[\s\\*_~`[\]()#>+\-|<\u200B]/g
const FENCE_INFO = /^([\s>]*(?:`{3,}|~{3,})).*$/gm

/** The characters of `markdown` a rendering must keep, in order. */
export const contentOf = (markdown: string) => markdown.replace(/\r\n?/g, "\n").replace(FENCE_INFO, "$1").replace(SYNTAX, "")

/** Whether `needle`'s characters occur in `haystack` in order; the first one missing if not. */
export function missingFrom(needle: string, haystack: string): string | undefined {
  let at = 0
  for (const char of needle) {
    const found = haystack.indexOf(char, at)
    if (found < 0) return `${JSON.stringify(char)} (after ${JSON.stringify(haystack.slice(Math.max(0, at - 30), at))})`
    at = found + char.length
  }
  return undefined
}

const letters = fc.constantFrom(..."abcxyzäß中字😀👍🏽&<>\"'!?.,:;=%/0123456789")
const word = fc.string({ unit: letters, minLength: 1, maxLength: 8 })
const urlPath = fc.string({ unit: fc.constantFrom(..."abz09-._~/?=&%\"'"), maxLength: 24 })
export const url = fc.tuple(fc.constantFrom("https://example.com/", "http://a.b/", "mailto:x@y.z?subject="), urlPath).map(([base, path]) => base + path)

type Inline = { markdown: string; urls: string[] }
const join = (nodes: Inline[]): Inline => ({ markdown: nodes.map((node) => node.markdown).join(" "), urls: nodes.flatMap((node) => node.urls) })

const emphasis = (children: fc.Arbitrary<Inline>) =>
  fc.tuple(fc.constantFrom("**", "*", "_", "~~", "__"), fc.array(children, { minLength: 1, maxLength: 3 })).map(([mark, nodes]) => {
    const body = join(nodes)
    return { markdown: `${mark}${body.markdown}${mark}`, urls: body.urls }
  })

/** Well-formed inline Markdown, emphasis and links nested (no link in a link's label), with the URLs of its links in order. */
const inline: fc.Arbitrary<Inline> = fc.letrec<{ node: Inline; linkless: Inline; leaf: Inline }>((tie) => ({
  leaf: fc.oneof(word.map((text) => ({ markdown: text, urls: [] })), word.map((text) => ({ markdown: `\`${text}\``, urls: [] }))),
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    tie("leaf"),
    emphasis(tie("node")),
    fc.tuple(fc.array(tie("linkless"), { minLength: 1, maxLength: 3 }), url).map(([label, href]) => ({ markdown: `[${join(label).markdown}](${href})`, urls: [href] })),
  ),
  linkless: fc.oneof({ depthSize: "small", withCrossShrink: true }, tie("leaf"), emphasis(tie("linkless"))),
})).node

/** A line of inline nodes; it starts with a word, since `~~~~` at a line start would open a code block. */
const line = fc.tuple(word, fc.array(inline, { minLength: 1, maxLength: 5 })).map(([first, nodes]) => join([{ markdown: first, urls: [] }, ...nodes]))

/** Well-formed Markdown blocks (paragraphs, headings, list items, quotes, code) and their link URLs in order. */
export const structuredMarkdown: fc.Arbitrary<Inline> = fc
  .array(
    fc.oneof(
      line,
      line.map((text) => ({ ...text, markdown: `## ${text.markdown}` })),
      fc.tuple(fc.constantFrom("- ", "* ", "1. ", "  - "), line).map(([marker, text]) => ({ ...text, markdown: marker + text.markdown })),
      fc.tuple(fc.integer({ min: 1, max: 3 }), line).map(([depth, text]) => ({ ...text, markdown: "> ".repeat(depth) + text.markdown })),
      fc.tuple(fc.constantFrom("", "js", "python"), fc.array(word, { minLength: 1, maxLength: 4 })).map(([language, lines]) => ({ markdown: `\`\`\`${language}\n${lines.join("\n")}\n\`\`\``, urls: [] })),
    ),
    { minLength: 1, maxLength: 8 },
  )
  .chain((blocks) => fc.array(fc.constantFrom("\n", "\n\n"), { minLength: blocks.length, maxLength: blocks.length }).map((gaps) => ({ markdown: blocks.map((block, n) => (n > 0 ? gaps[n] : "") + block.markdown).join(""), urls: blocks.flatMap((block) => block.urls) })))

/** Markdown's markup in every combination, paired or not, with now and then a long run to cut. */
export const chaoticMarkdown: fc.Arbitrary<string> = fc
  .array(
    fc.oneof(
      { weight: 20, arbitrary: fc.constantFrom("word", "reply", " ", " ", "\n", "\n\n", "**", "*", "_", "__", "~~", "`", "``", "```", "```py\n", "\n```\n", "~~~\n", "[", "]", "](", ")", "(", "](https://example.com/?q=1&r=\"|2\")", "](javascript:alert(1))", "<", ">", "<b>", "&", "&amp;", '"', "\\", "😀", "👍🏽", "中文", "# ", "> ", "> > ", "- ", "1. ", "    ", "\t", "|") },
      { weight: 1, arbitrary: fc.tuple(fc.constantFrom("x", "😀", "&", "*", "`", "> ", "x "), fc.integer({ min: 100, max: 1500 })).map(([run, count]) => run.repeat(count)) },
    ),
    { maxLength: 120 },
  )
  .map((pieces) => pieces.join(""))

/** One construct nested `depth` deep: quotes, emphasis, links, lists, code in links. */
export const deepMarkdown: fc.Arbitrary<string> = fc
  .tuple(
    fc.constantFrom<[string, string]>(["> ", ""], [">", ""], ["**", "**"], ["*", "*"], ["_", "_"], ["x ~~", "~~"], ["*a ", " b*"], ["**x ", " y**"], ["[", "](https://example.com/)"], ["[`", "`](https://example.com/)"], ["*[", "](https://example.com/)*"], ["- ", "\n"], ["  ", "- x\n"], ["`", "`"], ["```\n", "\n```\n"]),
    fc.integer({ min: 1000, max: 10_000 }),
  )
  .map(([[open, close], depth]) => `${open.repeat(depth)}text${close.repeat(depth)}`)
