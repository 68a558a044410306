/**
 * Property-based tests (fast-check, which shrinks a failure to a minimal input) over both
 * renderers: every input gives output the platform accepts, keeps the text and the links,
 * and nothing nested however deep makes a renderer throw.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { withButtons } from "../../../adapters/slack/blocks.ts"
import { renderSlack, SLACK_LIMIT } from "../../../adapters/slack/render.ts"
import { renderTelegram, TELEGRAM_LIMIT } from "../../../adapters/telegram/render.ts"
import { chaoticMarkdown, contentOf, deepMarkdown, missingFrom, structuredMarkdown } from "../../support/markdown-arbitrary.ts"
import { blocksProblems, mrkdwnProblems, mrkdwnReading } from "../../support/slack-mrkdwn.ts"
import { telegramHtmlProblems, telegramReading } from "../../support/telegram-html.ts"

const RUNS = { numRuns: 200 }
const anyMarkdown = fc.oneof(chaoticMarkdown, structuredMarkdown.map((generated) => generated.markdown))

const telegram = (markdown: string, limit = TELEGRAM_LIMIT) => renderTelegram(markdown, limit).map((chunk) => chunk.html)
const slack = (markdown: string, limit = SLACK_LIMIT) => renderSlack(markdown, limit)

/** The checks both renderers share, for `render` and its dialect's validator and reading; `limits[0]` is the platform's. */
function dialect(name: string, render: (markdown: string, limit?: number) => string[], problems: (part: string, limit: number) => string[], reading: (part: string) => { text: string; urls: string[] }, limits: number[]) {
  describe(`${name}: properties`, () => {
    it("always gives parts the platform accepts, within the limit", () => {
      fc.assert(
        fc.property(anyMarkdown, fc.constantFrom(...limits), (markdown, limit) => {
          for (const [n, part] of render(markdown, limit).entries()) {
            expect(problems(part, limit), `part ${n}: ${JSON.stringify(part.slice(0, 300))}`).toEqual([])
            expect(part.length).toBeLessThanOrEqual(limit)
          }
        }),
        RUNS,
      )
    })

    it("keeps every character of text, in order (Markdown syntax aside)", () => {
      fc.assert(
        fc.property(anyMarkdown, fc.constantFrom(...limits), (markdown, limit) => {
          const shown = render(markdown, limit)
            .map((part) => reading(part).text)
            .join("")
          expect(missingFrom(contentOf(markdown), shown)).toBeUndefined()
        }),
        RUNS,
      )
    })

    it("keeps every link as a link with its URL, in order", () => {
      fc.assert(
        fc.property(structuredMarkdown, ({ markdown, urls }) => {
          const linked = render(markdown).flatMap((part) => reading(part).urls)
          expect(linked).toEqual(urls)
        }),
        RUNS,
      )
    })

    it("never throws on nesting 1,000-10,000 deep, and still keeps the text", () => {
      fc.assert(
        fc.property(deepMarkdown, (markdown) => {
          const parts = render(markdown)
          for (const part of parts) expect(problems(part, limits[0]!)).toEqual([])
          expect(parts.map((part) => reading(part).text).join("")).toContain("text")
        }),
        { numRuns: 15 },
      )
    })
  })
}

dialect("Telegram", telegram, telegramHtmlProblems, telegramReading, [TELEGRAM_LIMIT, 512, 1000])
dialect("Slack", slack, mrkdwnProblems, mrkdwnReading, [SLACK_LIMIT, 1000, 1500])

describe("the cases the fuzzing found, kept as examples", () => {
  it("Telegram keeps a link whose label is inline code, and never nests code in a link or in bold", () => {
    expect(telegram("[`npm test`](https://example.com/)")).toEqual(['<a href="https://example.com/">npm test</a>'])
    expect(telegram("**run `npm test` now**")).toEqual(["<b>run </b><code>npm test</code><b> now</b>"])
    expect(telegram("[**bold `code`**](https://example.com/)")).toEqual(['<a href="https://example.com/"><b>bold code</b></a>'])
    expect(telegram("***`x`***")).toEqual(["<code>x</code>"])
  })

  it("Slack keeps literal backticks from pairing, in text and in code", () => {
    expect(slack("a ``` b")).toEqual(["a \u200B`\u200B\u200B`\u200B\u200B`\u200B b"])
    expect(slack("~~~\nx ``` y\n~~~")).toEqual(["```\nx `\u200B`\u200B` y\n```"])
    expect(slack("`` a`b ``")).toEqual(["a\u200B`\u200Bb"])
    expect(slack("> ```\n> `x`\n> ```")).toEqual(["> ```\u200B`\u200Bx\u200B`\u200B```"])
  })

  it("both survive 10,000 quote markers and 10,000 nested emphasis marks", () => {
    for (const markdown of ["> ".repeat(10_000) + "deep", "*".repeat(10_000) + "deep" + "*".repeat(10_000), "**a ".repeat(10_000) + "deep" + " b**".repeat(10_000)]) {
      expect(telegram(markdown).join("")).toContain("deep")
      expect(slack(markdown).join("")).toContain("deep")
    }
  })

  it("Slack buttons stay within Block Kit's limits", () => {
    fc.assert(
      fc.property(fc.array(fc.record({ id: fc.string({ minLength: 1, maxLength: 2000 }), label: fc.string({ maxLength: 200 }) }), { maxLength: 60 }), (buttons) => {
        expect(blocksProblems(withButtons("question", buttons))).toEqual([])
      }),
      { numRuns: 100 },
    )
    expect(() => withButtons("q", [{ id: "x".repeat(2001), label: "too long an id" }])).toThrow(/1-2000 characters/)
    expect(() => withButtons("q", Array.from({ length: 49 * 25 + 1 }, (_, n) => ({ id: `b${n}`, label: `${n}` })))).toThrow(/at most 1225 buttons/)
    expect(withButtons("q", [{ id: "a", label: "😀".repeat(50) }, { id: "b", label: "  " }]).at(-1)).toMatchObject({
      elements: [{ text: { text: `${"😀".repeat(37)}…` } }, { text: { text: "…" } }],
    })
  })
})
