/**
 * Builds the index of one memory folder off the main thread, then answers searches on it
 * until it is replaced. Building reads and tokenises every note, which takes seconds for a
 * large memory; doing it here keeps the main event loop free. A brute-force worker only reads
 * and tokenises, then scores every chunk per search: it serves a folder that has no index yet
 * within a second or so at 10,000 chunks, until the full index built after it replaces it.
 */
import { getHeapStatistics } from "node:v8"
import { parentPort, workerData } from "node:worker_threads"
import { ChunkIndex, type ChunkFilter, type CorpusStats } from "./bm25.ts"
import { expandQuery, type WeightedTerm } from "./expand.ts"
import type { LanguageCode } from "./language.ts"
import { listNotes, readNote, type Note, type Stamp } from "./notes.ts"
import { updatesOf, type Update } from "./supersede.ts"
import type { QueryWord } from "./text.ts"

export interface WorkerInput {
  dir: string
  /** Skip building the wink index (see ChunkIndex). */
  bruteForce?: boolean
}

/** Sent once the index is built: which version of each note it holds. */
export interface Ready {
  type: "ready"
  manifest: Array<[source: string, stamp: Stamp]>
  chunks: number
  /** Bytes used on the worker's own heap after building. */
  heapUsed: number
  /** The chunks that announce a change to a fact (supersede.ts). */
  updates: Update[]
}

export interface SearchRequest {
  id: number
  words: QueryWord[]
  /** Query terms the notes changed since the build have: known words, never corrected. */
  known: string[]
  after?: string
  before?: string
  exclude: string[]
  limit: number
}

export interface WorkerHit {
  source: string
  date: string
  text: string
  language: LanguageCode
  score: number
  covers: number
  matches: number
}

export type SearchReply =
  | {
      id: number
      hits: WorkerHit[]
      /** The terms searched, with their weights (expand.ts). */
      terms: WeightedTerm[]
      /** Words neither the index nor `known` has. */
      unresolved: number[]
      stats: CorpusStats
    }
  | { id: number; error: string }

const READ_CONCURRENCY = 32

async function readAll(dir: string): Promise<Note[]> {
  const sources = await listNotes(dir)
  const notes: Note[] = []
  for (let i = 0; i < sources.length; i += READ_CONCURRENCY) {
    for (const note of await Promise.all(sources.slice(i, i + READ_CONCURRENCY).map((source) => readNote(dir, source)))) {
      if (note) notes.push(note)
    }
  }
  return notes
}

function answer(index: ChunkIndex, request: SearchRequest): SearchReply {
  const { terms, unresolved } = expandQuery(request.words, index.vocabulary(), new Set(request.known))
  const queryTerms = terms.map((t) => t.term)
  const filter: ChunkFilter = { after: request.after, before: request.before, exclude: new Set(request.exclude) }
  const query = { terms: queryTerms, weights: terms.map((t) => t.weight), words: terms.map((t) => t.words) }
  const hits = index.search(query, filter, request.limit).map(({ chunk, language, score, covers, matches }) => ({ ...chunk, language, score, covers, matches }))
  return { id: request.id, hits, terms, unresolved, stats: index.stats(queryTerms) }
}

const port = parentPort!
const { dir, bruteForce } = workerData as WorkerInput
const notes = await readAll(dir)
const chunks = notes.flatMap((note) => note.chunks)
const index = new ChunkIndex(chunks, { bruteForce })
port.on("message", (request: SearchRequest) => {
  let reply: SearchReply
  try {
    reply = answer(index, request)
  } catch (error) {
    reply = { id: request.id, error: error instanceof Error ? error.message : String(error) }
  }
  port.postMessage(reply)
})
port.postMessage({
  type: "ready",
  manifest: notes.map((note) => [note.source, note.stamp]),
  chunks: index.size,
  heapUsed: getHeapStatistics().used_heap_size,
  updates: updatesOf(chunks),
} satisfies Ready)
