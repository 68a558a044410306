/**
 * Memory benchmark: the Memory class (wink BM25 in a worker + brute-force delta) on 10,000 and
 * 100,000 generated chunks, beside SQLite FTS5 bm25() through the sqlite3 driver on exactly
 * the same chunks and queries. Queries have a known answer (the chunk they were drawn from),
 * so recall@5 compares the rankings, not just the speed.
 *
 *   npx tsx bench/memory.ts [--json]
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { monitorEventLoopDelay } from "node:perf_hooks"
import { setTimeout as sleep } from "node:timers/promises"
import { pathToFileURL } from "node:url"
import sqlite3 from "sqlite3"
import { Memory } from "../src/memory/memory.ts"
import { listNotes, readNote, type Chunk } from "../src/memory/notes.ts"
import { Figures } from "./figures.ts"
import { benchHybridOverhead } from "./hybrid.ts"
import { benchSearchDuringReindex } from "./reindex.ts"
import { runRetrievalBench } from "./retrieval.ts"
import { seededRandom } from "../test/support/random.ts"

const USER = "bench:owner"
const QUERIES = 300
const WARM_UP = 50
const FRESHNESS_TRIALS = 20
/** Pause between remember+search probes during a rebuild: a busy user, not a flood. */
const PROBE_INTERVAL_MS = 20
const VOCABULARY = 40_000
/** Figures without a target of their own (the FTS5 baseline, sizes, build times). */

interface Query {
  text: string
  /** Index of the chunk the query was drawn from. */
  target: number
}

interface Latency {
  p50: number
  p99: number
  recall: number
}

export async function runMemoryBench({ json }: { json: boolean }): Promise<void> {
  const figures = new Figures(json)
  await runRetrievalBench(figures)
  await benchSize(figures, 10_000, true)
  await benchSize(figures, 100_000, false)
}

/** `targets`: the brief's targets hold at 10k; at 100k latency and build figures are informational. */
async function benchSize(figures: Figures, size: number, targets: boolean): Promise<void> {
  const label = `memory_${size / 1000}k`
  const root = await mkdtemp(join(tmpdir(), "steward-memory-bench-"))
  const memory = new Memory({ dir: root, scope: "shared", rebuildThreshold: 1_000_000 })
  try {
    await generate(join(root, "shared"), size, seededRandom(size))
    const built = await memory.rebuild(USER)
    figures.add(`${label}_chunks`, built.chunks, "chunks")
    figures.add(`${label}_build`, built.ms, "ms")
    figures.add(`${label}_worker_heap_after_build`, built.heapUsed / 2 ** 20, "MiB")
    // The corpus is dropped before the rebuild below: a bench-sized main heap would add GC
    // pauses that Steward's main thread, which never holds the corpus, does not have.
    const queries = await compareWithFts(figures, label, targets, memory, join(root, "shared"), seededRandom(size + 1))

    const idle: number[] = []
    for (let i = 0; i < FRESHNESS_TRIALS; i++) idle.push(await freshness(memory, `idle${i}`))
    figures.add(`${label}_freshness_max`, Math.max(...idle), "ms", "<= 100")

    // A rebuild while notes are remembered and searched: the main thread must stay responsive.
    const delay = monitorEventLoopDelay({ resolution: 1 })
    delay.enable()
    let rebuilding = true
    const rebuild = memory.rebuild(USER).finally(() => (rebuilding = false))
    const during: number[] = []
    for (let i = 0; rebuilding; i++) {
      during.push(await freshness(memory, `busy${i}`))
      await sleep(PROBE_INTERVAL_MS)
    }
    const rebuilt = await rebuild
    delay.disable()
    figures.add(`${label}_rebuild`, rebuilt.ms, "ms")
    figures.add(`${label}_freshness_during_rebuild_max`, Math.max(...during), "ms", "<= 100")
    figures.add(`${label}_event_loop_block_during_rebuild`, delay.max / 1e6, "ms", "<= 50")
    // Last: the vectors it loads would otherwise be garbage collected during the rebuild above.
    if (targets) await benchHybridOverhead(figures, label, root, queries)
    if (targets) await benchSearchDuringReindex(figures, label, root, queries)
  } finally {
    await memory.close()
    await rm(root, { recursive: true, force: true })
  }
}

/** Latency and recall@5 of Memory and of FTS5 on the same chunks and queries. */
/** Returns the queries' texts, for the hybrid overhead. */
async function compareWithFts(figures: Figures, label: string, targets: boolean, memory: Memory, folder: string, random: () => number): Promise<string[]> {
  const chunks = await loadChunks(folder)
  const queries = makeQueries(chunks, random)
  const db = new sqlite3.Database(":memory:")
  try {
    const ftsStart = performance.now()
    await loadFts(db, chunks)
    figures.add(`${label}_fts5_build`, performance.now() - ftsStart, "ms")
    const ours = await measure(queries, async (query) => {
      const hits = await memory.search(USER, { query: query.text, limit: 5 })
      const target = chunks[query.target]!
      return hits.some((hit) => hit.source === target.source && target.text.includes(hit.content.replace(/^…|…$/g, "")))
    })
    const fts = await measure(queries, async (query) => {
      const rows = await all<{ rowid: number }>(db, FTS_QUERY, [ftsMatch(query.text)])
      return rows.some((row) => row.rowid === query.target + 1)
    })
    figures.add(`${label}_search_p50`, ours.p50, "ms", targets ? "<= 2" : undefined)
    figures.add(`${label}_search_p99`, ours.p99, "ms")
    figures.add(`${label}_fts5_search_p50`, fts.p50, "ms")
    figures.add(`${label}_fts5_search_p99`, fts.p99, "ms")
    figures.add(`${label}_p50_vs_fts5`, ours.p50 / fts.p50, "x", targets ? "<= 2" : undefined)
    // Rounded down: a recall step is 1/QUERIES, far more than the rounding, so one query fewer still misses.
    figures.add(`${label}_recall_at_5`, ours.recall, "ratio", `>= ${Math.floor(fts.recall * 1000) / 1000}`)
    figures.add(`${label}_fts5_recall_at_5`, fts.recall, "ratio")
    return queries.map((query) => query.text)
  } finally {
    await new Promise((resolve) => db.close(resolve))
  }
}

/** Milliseconds from remember() to the first search that finds the note. */
async function freshness(memory: Memory, tag: string): Promise<number> {
  const word = `zqx${tag}marker`
  const start = performance.now()
  await memory.remember(USER, `Freshness probe ${word} written by the benchmark`, false)
  for (let attempt = 0; attempt < 100; attempt++) {
    const hits = await memory.search(USER, { query: word, limit: 1 })
    if (hits.length > 0) return performance.now() - start
  }
  throw new Error(`note ${word} was not found after 100 searches`)
}

async function measure(queries: Query[], run: (query: Query) => Promise<boolean>): Promise<Latency> {
  for (const query of queries.slice(0, WARM_UP)) await run(query)
  const times: number[] = []
  let found = 0
  for (const query of queries) {
    const start = performance.now()
    if (await run(query)) found++
    times.push(performance.now() - start)
  }
  times.sort((a, b) => a - b)
  return { p50: percentile(times, 50), p99: percentile(times, 99), recall: found / queries.length }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

// ---- corpus ----------------------------------------------------------------------------

/**
 * Daily notes of 1–6 dated sections, ~80 words each, words drawn from a Zipf distribution
 * over pseudo-words (so term statistics look like text, not like uniform noise).
 */
async function generate(folder: string, size: number, random: () => number): Promise<void> {
  const words = vocabulary(random)
  const zipf = zipfSampler(words.length, 1.05, random)
  const sentence = () => {
    const length = 6 + Math.floor(random() * 10)
    const out = Array.from({ length }, () => words[zipf()]!)
    return `${out[0]!.charAt(0).toUpperCase()}${out.join(" ").slice(1)}.`
  }
  await mkdir(join(folder, "memory"), { recursive: true })
  const files: Array<[string, string]> = []
  for (let made = 0, n = 0; made < size; n++) {
    const sections = Math.min(size - made, 1 + Math.floor(random() * 6))
    const day = new Date(Date.UTC(2024, 0, 1 + Math.floor(random() * 1000))).toISOString().slice(0, 10)
    const body = Array.from({ length: sections }, () => {
      const text = Array.from({ length: 4 + Math.floor(random() * 6) }, sentence).join(" ")
      return `## ${words[zipf()]} ${words[zipf()]}\n\n${text}\n`
    })
    files.push([join(folder, "memory", `${day}-note-${n}.md`), body.join("\n")])
    made += sections
  }
  for (let i = 0; i < files.length; i += 256) await Promise.all(files.slice(i, i + 256).map(([file, text]) => writeFile(file, text)))
}

function vocabulary(random: () => number): string[] {
  const onsets = [..."bdfgklmnprstvz", "br", "ch", "dr", "kr", "pl", "sh", "st", "tr"]
  const vowels = [..."aeiou", "ai", "ou"]
  const codas = ["", "", "", "n", "r", "l", "m", "k"]
  const pick = <T>(list: T[]) => list[Math.floor(random() * list.length)]!
  const words = new Set<string>()
  while (words.size < VOCABULARY) {
    const syllables = 2 + Math.floor(random() * 3)
    words.add(Array.from({ length: syllables }, () => pick(onsets) + pick(vowels) + pick(codas)).join(""))
  }
  return [...words]
}

function zipfSampler(n: number, exponent: number, random: () => number): () => number {
  const cumulative = new Float64Array(n)
  let sum = 0
  for (let rank = 0; rank < n; rank++) cumulative[rank] = sum += 1 / (rank + 1) ** exponent
  return () => {
    const x = random() * sum
    let low = 0
    let high = n - 1
    while (low < high) {
      const mid = (low + high) >> 1
      if (cumulative[mid]! < x) low = mid + 1
      else high = mid
    }
    return low
  }
}

/** The chunks exactly as the index sees them, so FTS5 gets the same documents. */
async function loadChunks(folder: string): Promise<Chunk[]> {
  const chunks: Chunk[] = []
  for (const source of await listNotes(folder)) chunks.push(...(await readNote(folder, source))!.chunks)
  return chunks
}

/**
 * Known-answer queries: three words of a chunk that many chunks have (document frequency
 * 1–20%), for half of them one replaced by a word few have (under 1%); the first sometimes
 * inflected with a plural -s (the stemmers must undo it); for half a random word the chunk
 * may lack.
 */
function makeQueries(chunks: Chunk[], random: () => number): Query[] {
  const words = chunks.map((chunk) => new Set(chunk.text.toLowerCase().match(/[a-z]+/g)))
  const df = new Map<string, number>()
  for (const set of words) for (const word of set) df.set(word, (df.get(word) ?? 0) + 1)
  const all = [...df.keys()]
  const pick = (list: string[]) => list[Math.floor(random() * list.length)]!
  const queries: Query[] = []
  while (queries.length < QUERIES) {
    const target = Math.floor(random() * chunks.length)
    const own = [...words[target]!]
    const rare = own.filter((word) => df.get(word)! < chunks.length / 100)
    const common = own.filter((word) => df.get(word)! >= chunks.length / 100 && df.get(word)! < chunks.length / 5)
    if (rare.length < 1 || common.length < 3) continue
    const picked = new Set([random() < 0.5 ? pick(rare) : pick(common), pick(common), pick(common)])
    if (picked.size < 3) continue
    // Only consonant endings: Porter2 rightly keeps "-us"/"-ous" words whole, which English
    // plurals of vowel-ending words ("menus") rarely are, and which would only test the stemmers' taste.
    const text = [...picked].map((word, i) => (i === 0 && /[^aeious]$/.test(word) && random() < 0.3 ? `${word}s` : word))
    if (random() < 0.5) text.push(pick(all))
    queries.push({ text: text.join(" "), target })
  }
  return queries
}


// ---- FTS5 ------------------------------------------------------------------------------

/** Same output as search_memory: top 5 with a snippet. */
const FTS_QUERY = "SELECT rowid, source, snippet(chunks, 0, '', '', '…', 40) AS content, bm25(chunks) AS score FROM chunks WHERE chunks MATCH ? ORDER BY rank LIMIT 5"

async function loadFts(db: sqlite3.Database, chunks: Chunk[]): Promise<void> {
  await run(db, "CREATE VIRTUAL TABLE chunks USING fts5(text, source UNINDEXED, tokenize = 'porter unicode61')")
  await run(db, "BEGIN")
  for (const chunk of chunks) await run(db, "INSERT INTO chunks (text, source) VALUES (?, ?)", [chunk.text, chunk.source])
  await run(db, "COMMIT")
}

/** Any of the words, like BM25 over a bag of words (FTS5 alone would require all of them). */
function ftsMatch(query: string): string {
  return query
    .split(/\s+/)
    .map((word) => `"${word.replace(/"/g, '""')}"`)
    .join(" OR ")
}

function run(db: sqlite3.Database, sql: string, params: unknown[] = []): Promise<void> {
  return new Promise((resolve, reject) => db.run(sql, params, (error) => (error ? reject(error) : resolve())))
}

function all<T>(db: sqlite3.Database, sql: string, params: unknown[]): Promise<T[]> {
  return new Promise((resolve, reject) => db.all(sql, params, (error, rows) => (error ? reject(error) : resolve(rows as T[]))))
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await runMemoryBench({ json: process.argv.includes("--json") })
  process.exit(0)
}
