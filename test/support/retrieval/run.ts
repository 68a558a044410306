/**
 * Writes the retrieval set into a memory folder and measures search against it. Shared by the
 * test (test/memory/retrieval.test.ts) and the benchmark (bench/retrieval.ts), so the figures
 * the benchmark prints are the ones the suite holds.
 */
import { mkdir, writeFile } from "node:fs/promises"
import path from "node:path"
import type { MemoryHit, MemorySearch } from "../../../src/tool/capabilities.ts"
import { fillerNotes } from "./filler.ts"
import { NOTES, type SetNote } from "./notes.ts"
import { QUERIES, type QueryKind, type SetQuery } from "./queries.ts"

export const USERS = { A: "telegram:1001", B: "telegram:1002" } as const

export interface SearchableMemory {
  folder(user: string): string
  search(user: string, search: MemorySearch): Promise<MemoryHit[]>
}

export const sourceOf = (note: Pick<SetNote, "date" | "id">) => `memory/${note.date}-${note.id}.md`

export function allNotes(): SetNote[] {
  return [...NOTES, ...fillerNotes("A", 320, 15), ...fillerNotes("B", 60, 16)]
}

export async function writeSet(memory: SearchableMemory): Promise<void> {
  for (const note of allNotes()) {
    const file = path.join(memory.folder(USERS[note.user]), sourceOf(note))
    await mkdir(path.dirname(file), { recursive: true })
    await writeFile(file, `${note.text}\n`)
  }
}

export interface QueryResult {
  query: SetQuery
  hits: MemoryHit[]
  /** An expected note is among the first five. */
  found: boolean
  /** A note stating the current fact (query.current, default the first expected) ranks first. */
  first: boolean
  /** A hit from user B's folder came back (it never may). */
  leaked: boolean
  /** A hit outside the query's date window came back. */
  outsideWindow: boolean
}

const B_SOURCES = new Set(allNotes().filter((note) => note.user === "B" && !note.id.startsWith("filler")).map(sourceOf))
const B_TEXTS = allNotes().filter((note) => note.user === "B" && !note.id.startsWith("filler")).map((note) => note.text)

/** Local midnight / end of day, as the search_memory tool passes whole-day bounds. */
const dayStart = (day: string) => new Date(`${day}T00:00:00`)
const dayEnd = (day: string) => new Date(`${day}T23:59:59.999`)

export async function runQueries(memory: SearchableMemory, queries: SetQuery[] = QUERIES): Promise<QueryResult[]> {
  const results: QueryResult[] = []
  for (const query of queries) {
    const hits = await memory.search(USERS.A, {
      query: query.query,
      limit: 5,
      after: query.after ? dayStart(query.after) : undefined,
      before: query.before ? dayEnd(query.before) : undefined,
    })
    const wanted = new Set(query.expect.map((id) => sourceOf(NOTES.find((note) => note.id === id) ?? fail(id))))
    const current = new Set((query.current ?? query.expect.slice(0, 1)).map((id) => sourceOf(NOTES.find((note) => note.id === id)!)))
    const date = (source: string) => /(\d{4}-\d{2}-\d{2})/.exec(source)?.[1] ?? ""
    results.push({
      query,
      hits,
      found: hits.some((hit) => wanted.has(hit.source)),
      first: hits[0] !== undefined && current.has(hits[0].source),
      leaked: hits.some((hit) => B_SOURCES.has(hit.source) || B_TEXTS.some((text) => text.includes(hit.content.replace(/^…|…$/g, "")))),
      outsideWindow: hits.some((hit) => (query.after !== undefined && date(hit.source) < query.after) || (query.before !== undefined && date(hit.source) > query.before)),
    })
  }
  return results
}

function fail(id: string): never {
  throw new Error(`retrieval set: no note ${id}`)
}

export interface SetFigures {
  recallAt5: number
  currentFactAt1: number
  recallAt5De: number
  recallAt5Typo: number
  /** Every query, paraphrases included (hybrid mode). */
  recallAt5All: number
  recallAt5Paraphrase: number
  /** Queries with a date window (after/before). */
  recallAt5Window: number
  byKind: Record<QueryKind, number>
}

/** The embedders the fake server has (test/fakes/embeddings-server.ts), by what they stand for. */
export const EMBEDDERS = { concepts: "fake-embed", ngram: "fake-ngram", random: "fake-random" } as const

/** The lowest, over query kinds, of hybrid recall@5 minus lexical recall@5 (paraphrases, which words alone cannot find, included). */
export function worstKind(lexical: SetFigures, hybrid: SetFigures): number {
  return Math.min(...(Object.keys(hybrid.byKind) as QueryKind[]).map((kind) => hybrid.byKind[kind] - lexical.byKind[kind]))
}

export function figuresOf(results: QueryResult[]): SetFigures {
  const share = (list: QueryResult[], ok: (r: QueryResult) => boolean) => (list.length === 0 ? 0 : list.filter(ok).length / list.length)
  const of = (...kinds: QueryKind[]) => results.filter((r) => kinds.includes(r.query.kind))
  const lexical = results.filter((r) => r.query.kind !== "paraphrase")
  const kinds: QueryKind[] = ["changed", "de", "typo", "inflection", "question", "distractor", "window", "paraphrase"]
  return {
    recallAt5: share(lexical, (r) => r.found),
    currentFactAt1: share(of("changed"), (r) => r.first),
    recallAt5De: share(of("de"), (r) => r.found),
    recallAt5Typo: share(of("typo"), (r) => r.found),
    recallAt5All: share(results, (r) => r.found),
    recallAt5Paraphrase: share(of("paraphrase"), (r) => r.found),
    recallAt5Window: share(of("window"), (r) => r.found),
    byKind: Object.fromEntries(kinds.map((kind) => [kind, share(of(kind), (r) => r.found)])) as Record<QueryKind, number>,
  }
}
