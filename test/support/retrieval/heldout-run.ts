/**
 * Writes the held-out set (heldout.ts), one memory root per case (scope "shared"), and measures
 * which note comes first. Each case's Memory is opened and closed in turn, so one index worker
 * runs at a time. Shared by test/memory/heldout.test.ts and bench/retrieval.ts.
 */
import { mkdir, writeFile } from "node:fs/promises"
import path from "node:path"
import type { MemoryHit } from "../../../src/tool/capabilities.ts"
import { fillerNotes } from "./filler.ts"
import { HELD_OUT, HELD_OUT_BACKGROUND, type HeldOutCase, type HeldOutKind } from "./heldout.ts"
import type { Memory } from "../../../src/memory/memory.ts"

const USER = "heldout"
const rootOf = (dir: string, index: number) => path.join(dir, `case-${index}`)
const sourceOf = (date: string, slug: string) => `memory/${date}-${slug}.md`
const caseSource = (test: HeldOutCase, note: number) => sourceOf(test.notes[note]![0], `case-${note}`)

export async function writeHeldOut(dir: string): Promise<void> {
  const background = [...HELD_OUT_BACKGROUND.map(([date, text], i) => ({ date, text, slug: `background-${i}` })), ...fillerNotes("A", 40, 26).map((note) => ({ date: note.date, text: note.text, slug: note.id }))]
  for (const [index, test] of HELD_OUT.entries()) {
    const folder = path.join(rootOf(dir, index), "shared")
    await mkdir(path.join(folder, "memory"), { recursive: true })
    const notes = [...background, ...test.notes.map(([date, text], i) => ({ date, text, slug: `case-${i}` }))]
    for (const note of notes) await writeFile(path.join(folder, sourceOf(note.date, note.slug)), `${note.text}\n`)
  }
}

export interface HeldOutResult {
  test: HeldOutCase
  hits: MemoryHit[]
  first: boolean
}

/** `open(root)`: a Memory of scope "shared" on one case's root; with an embedder, it is reindexed before the search. */
export async function runHeldOut(dir: string, open: (root: string) => Memory, { embedded }: { embedded: boolean }): Promise<HeldOutResult[]> {
  const results: HeldOutResult[] = []
  for (const [index, test] of HELD_OUT.entries()) {
    const memory = open(rootOf(dir, index))
    try {
      if (embedded) await memory.reindex()
      const hits = await memory.search(USER, { query: test.query, limit: 5 })
      results.push({ test, hits, first: hits[0]?.source === caseSource(test, test.current) })
    } finally {
      await memory.close()
    }
  }
  return results
}

/** Share of cases whose current note comes first, over all and by kind. */
export function heldOutFigures(results: HeldOutResult[]): { all: number; byKind: Partial<Record<HeldOutKind, number>> } {
  const share = (list: HeldOutResult[]) => list.filter((r) => r.first).length / list.length
  const kinds = [...new Set(results.map((r) => r.test.kind))]
  return { all: share(results), byKind: Object.fromEntries(kinds.map((kind) => [kind, share(results.filter((r) => r.test.kind === kind))])) }
}

/** One line per miss, for a failing test's message. */
export const missesOf = (results: HeldOutResult[]) => results.filter((r) => !r.first).map((r) => `${r.test.lang} ${r.test.kind} "${r.test.query}" → ${r.hits[0]?.content ?? "nothing"}`)
