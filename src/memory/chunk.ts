/**
 * Splits a Markdown note into search documents: one per heading section, or, for a section
 * over MAX_CHUNK_TOKENS, runs of its paragraphs (then sentences, then a hard cut) each
 * repeating the section's heading so the piece keeps its context.
 */
import { isCalendarDay } from "./dates.ts"
import { countTokens, tokenBoundary } from "./text.ts"

export const MAX_CHUNK_TOKENS = 400

export interface ChunkText {
  text: string
  /** YYYY-MM-DD from a dated heading (`## 2026-11-22`), when the section is under one. A daily
   *  note's name overrides it (see noteDate in notes.ts). */
  date?: string
}

const HEADING = /^(#{1,6})[ \t]+(.*?)[ \t#]*$/
const FENCE = /^\s{0,3}(```|~~~)/
const sentences = new Intl.Segmenter(undefined, { granularity: "sentence" })

interface Section {
  heading: string
  lines: string[]
  date?: string
}

export function chunkMarkdown(markdown: string): ChunkText[] {
  const sections: Section[] = []
  let current: Section = { heading: "", lines: [] }
  // A dated heading dates everything after it until the next dated heading or a heading of a
  // higher level, so an entry of memory.md that has its own `##` sub-headings keeps its date.
  let dated: { level: number; date: string } | undefined
  let fenced = false
  for (const line of markdown.split(/\r?\n/)) {
    if (FENCE.test(line)) fenced = !fenced
    const heading = fenced ? null : HEADING.exec(line)
    if (!heading) {
      current.lines.push(line)
      continue
    }
    sections.push(current)
    const level = heading[1]!.length
    const day = heading[2]!.slice(0, 10)
    if (isCalendarDay(day) && !/\d/.test(heading[2]!.charAt(10))) dated = { level, date: day }
    else if (dated && level < dated.level) dated = undefined
    current = { heading: line.trim(), lines: [], date: dated?.date }
  }
  sections.push(current)
  const filled = sections.filter((s) => s.lines.join("").trim() !== "")
  // A note that is only a heading ("# Buy milk") is still worth finding.
  const kept = filled.length > 0 ? filled : sections.filter((s) => s.heading !== "")
  return kept.flatMap(splitSection)
}

function splitSection(section: Section): ChunkText[] {
  const body = section.lines.join("\n").trim()
  const whole = section.heading && body ? `${section.heading}\n\n${body}` : section.heading || body
  if (countTokens(whole) <= MAX_CHUNK_TOKENS) return [{ text: whole, date: section.date }]
  const budget = Math.max(MAX_CHUNK_TOKENS - countTokens(section.heading), MAX_CHUNK_TOKENS / 2)
  const pieces = body.split(/\n[ \t]*\n/).flatMap((paragraph) => fit(paragraph.trim(), budget))
  const chunks: ChunkText[] = []
  let packed: string[] = []
  let size = 0
  const flush = () => {
    if (packed.length === 0) return
    const text = packed.join("\n\n")
    chunks.push({ text: section.heading ? `${section.heading}\n\n${text}` : text, date: section.date })
    packed = []
    size = 0
  }
  for (const piece of pieces) {
    const tokens = countTokens(piece)
    if (size + tokens > budget) flush()
    packed.push(piece)
    size += tokens
  }
  flush()
  return chunks
}

/** Pieces of `paragraph` of at most `budget` tokens: whole sentences where they fit. */
function fit(paragraph: string, budget: number): string[] {
  if (paragraph === "") return []
  if (countTokens(paragraph) <= budget) return [paragraph]
  const out: string[] = []
  let run = ""
  for (const { segment } of sentences.segment(paragraph)) {
    if (countTokens(run + segment) <= budget) {
      run += segment
      continue
    }
    if (run.trim()) out.push(run.trim())
    run = ""
    let rest = segment
    for (let cut = tokenBoundary(rest, budget); cut !== undefined; cut = tokenBoundary(rest, budget)) {
      out.push(rest.slice(0, cut).trim())
      rest = rest.slice(cut)
    }
    run = rest
  }
  if (run.trim()) out.push(run.trim())
  return out
}
