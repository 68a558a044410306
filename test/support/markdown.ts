/** Generated Markdown for the renderers' property tests, and the checks both renderers share. */
import { expect } from "vitest"
import { seededRandom } from "./random.ts"

export const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** What generated inputs are made of: `pieces`, and now and then one of `floods` as a run of up to 2,000, an input that must be cut hard. */
export type Generator = { pieces: readonly string[]; floods: readonly string[] }

/** Markdown-like input from `next`, Markdown's markup in every combination, paired or not. */
function markdownish(next: () => number, { pieces, floods }: Generator): string {
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]
  const parts: string[] = []
  const count = 1 + Math.floor(next() ** 2 * 300)
  for (let n = 0; n < count; n++) {
    if (next() < 0.01) parts.push(pick(floods).repeat(1 + Math.floor(next() * 2000)))
    else parts.push(pick(pieces))
  }
  return parts.join("")
}

/**
 * Renders 3,000 generated inputs at limits drawn from `limits` and fails on the first rendering
 * `violation` objects to, with its seed. The generator has to exercise splitting, or the
 * property says little: more than 300 inputs must need several parts.
 */
export function checkRenderings<Part>(
  render: (markdown: string, limit: number) => Part[],
  violation: (parts: Part[], markdown: string, limit: number) => string | undefined,
  generator: Generator,
  limits: readonly number[],
): void {
  let split = 0
  for (let seed = 1; seed <= 3000; seed++) {
    const next = seededRandom(seed)
    const markdown = markdownish(next, generator)
    const limit = limits[Math.floor(next() * limits.length)]
    const parts = render(markdown, limit)
    if (parts.length > 1) split++
    const failure = violation(parts, markdown, limit)
    if (failure) expect.fail(`seed ${seed}, limit ${limit}: ${failure}; input ${JSON.stringify(markdown.slice(0, 300))}…`)
  }
  expect(split).toBeGreaterThan(300)
}
