/**
 * Steward's memory: Markdown files, one folder per user (or one shared folder), searched
 * with BM25 (scope.ts), and by meaning too when an embedder is given (hybrid.ts). The files
 * are the truth: indexes and vectors are derived from them and anything written into the
 * folder by hand is searchable too.
 *
 *   <dir>/<folder>/memory.md                          long-term entries, `## YYYY-MM-DD` each
 *   <dir>/<folder>/memory/YYYY-MM-DD-<slug>.md        one note per remember()
 *   <dir>/<folder>/memory/YYYY-MM-DD-conversation-summary.md   compaction summaries, `## HH:MM` each
 *   <dir>/<folder>/.vectors.bin                       chunk vectors with the model's name (hybrid only)
 *
 * Dates are the local calendar day of this process (set TZ for the users' zone).
 */
import { appendFile, mkdir, readdir, readFile, writeFile } from "node:fs/promises"
import path from "node:path"
import type { MemoryHit, MemorySearch, MemoryService } from "../tool/capabilities.ts"
import { localDay, localTime } from "./dates.ts"
import type { Embedder } from "./embedder.ts"
import { fuse, Hybrid, vectorWeight, type Candidate } from "./hybrid.ts"
import { DAILY_FOLDER, LONG_TERM_FILE } from "./notes.ts"
import { withRecency } from "./recency.ts"
import { ScopeIndex, type IndexInfo, type ScopeOptions } from "./scope.ts"
import { memoryFolder, slugify } from "./slug.ts"
import { snippet } from "./snippet.ts"
import { withCurrentFacts } from "./supersede.ts"
import { factOf, type Fact } from "./facts.ts"
import { FileVectorStore, type VectorStore } from "./vector-store.ts"
import type { SyncInfo } from "./vectors.ts"

export interface MemoryOptions {
  /** DATA_DIR/memory */
  dir: string
  scope: "user" | "shared"
  /** Changed chunks searched by brute force before the index is rebuilt (default 256). */
  rebuildThreshold?: number
  /** A folder's index worker is stopped after this long without a search (default 10 min). */
  idleMs?: number
  /** Default true. false where fs.watch misses changes (some network mounts): every search then stats every note. */
  watch?: boolean
  /** Called whenever a folder's index has been (re)built. */
  onIndexed?: (info: IndexInfo) => void
  /** Failures of background rebuilds; the previous index keeps serving meanwhile. */
  onError?: (error: unknown) => void
  /** EMBEDDING_MODEL's embedder: hybrid search. None: lexical search only, nothing embedded. */
  embedder?: Embedder
  /** Where vectors are kept (default: a hidden file in each memory folder). */
  vectorStore?: VectorStore
  /** How long a query's embedding may take (default 3 s). */
  queryTimeoutMs?: number
  /** An embedding failed or was too slow; search fell back to lexical results. */
  onWarning?: (message: string) => void
}

/** Candidates ranked by BM25 before the recency prior picks the hits: a newer note a few
 *  places down must be able to move up. */
const POOL_FACTOR = 4
const MIN_POOL = 20
/** Highest numeric suffix tried for same-day notes with the same slug. */
const MAX_SAME_NAME = 1000

export class Memory implements MemoryService {
  private readonly scopes = new Map<string, { index: ScopeIndex; idle: NodeJS.Timeout }>()
  private readonly locks = new Map<string, Promise<void>>()
  private readonly scopeOptions: ScopeOptions
  private readonly idleMs: number
  private readonly hybrid?: Hybrid

  constructor(private readonly options: MemoryOptions) {
    this.idleMs = options.idleMs ?? 10 * 60_000
    this.scopeOptions = {
      rebuildThreshold: options.rebuildThreshold ?? 256,
      watch: options.watch ?? true,
      onIndexed: options.onIndexed ?? (() => {}),
      onError: options.onError ?? ((error) => process.emitWarning(`memory: background index rebuild failed: ${error instanceof Error ? error.message : error}`)),
    }
    if (options.embedder) {
      this.hybrid = new Hybrid({
        embedder: options.embedder,
        store: options.vectorStore ?? new FileVectorStore(),
        queryTimeoutMs: options.queryTimeoutMs,
        onWarning: options.onWarning ?? ((message) => process.emitWarning(message)),
      })
    }
  }

  /** The folder `user`'s notes live in. */
  folder(user: string): string {
    return memoryFolder(this.options.dir, this.options.scope, user)
  }

  /**
   * Writes a note and returns its path relative to the user's folder. Remembering the same
   * content again on the same day (a tool call replayed after a crash) returns the existing note.
   */
  async remember(user: string, content: string, longTerm: boolean): Promise<{ path: string }> {
    const folder = this.folder(user)
    const now = new Date()
    const heading = `## ${localDay(now)}`
    const entry = entryText(heading, content)
    // Only the last entry is compared: the same fact remembered again on another day is a new entry.
    const source = longTerm
      ? await this.appendEntry(folder, LONG_TERM_FILE, heading, content, (existing) => existing.endsWith(entry))
      : await writeDailyNote(folder, now, content)
    this.scopes.get(folder)?.index.noteChanged(source)
    this.hybrid?.refresh(folder)
    return { path: source }
  }

  /**
   * Appends a compacted conversation's summary to the user's daily summary note. Idempotent by
   * content: a summary already recorded today or yesterday (a turn replayed after a crash,
   * perhaps across midnight) is not written again. An empty summary is skipped (the agent loop
   * passes none: a summarising call that returned nothing is not a summary).
   */
  async recordCompaction(user: string, summary: string): Promise<void> {
    const body = summary.trim()
    if (body === "") return
    const folder = this.folder(user)
    const now = new Date()
    const yesterday = new Date(now.getFullYear(), now.getMonth(), now.getDate() - 1, 12)
    const earlier = path.join(folder, summaryNote(yesterday))
    const source = await this.appendEntry(folder, summaryNote(now), `## ${localTime(now)}`, body, async (existing) => {
      if (hasSummary(existing, body)) return true
      return hasSummary(await readIfAny(earlier), body)
    })
    this.scopes.get(folder)?.index.noteChanged(source)
    this.hybrid?.refresh(folder)
  }

  /**
   * Expects a query with searchable words and a limit of 1–50 (the tool checks both). With an
   * embedder, the query is embedded while the lexical search runs and the two are fused; the
   * recency prior applies to the fused ranking.
   */
  async search(user: string, search: MemorySearch): Promise<MemoryHit[]> {
    const folder = this.folder(user)
    const after = search.after && localDay(search.after)
    const before = search.before && localDay(search.before)
    const pool = Math.max(search.limit * POOL_FACTOR, MIN_POOL)
    const queryVector = this.hybrid?.embedQuery(search.query)
    const lexical = await this.scope(user).search({ query: search.query, after, before, limit: pool })
    const vector = await queryVector
    const vectorHits = vector ? this.hybrid!.search(folder, vector, { after, before }, pool) : []
    // No vectors yet (a first sync still running): the lexical ranking, with its own scores.
    const weight = vectorHits.length > 0 ? vectorWeight(this.hybrid!.trust(folder), lexical.hits, lexical.words) : 0
    const candidates: Candidate[] = weight > 0 ? fuse(lexical.hits, vectorHits, weight) : lexical.hits
    // A note found whose fact a newer note replaced brings that note in (supersede.ts).
    const current = withCurrentFacts(candidates, lexical.supersession, { after, before, query: search.query }, (update): Candidate => ({ chunk: update, score: 0, covers: 0, matches: 0 }))
    const hits: MemoryHit[] = []
    for (const hit of withRecency(current.map((candidate) => withLazyFact({ ...candidate, date: candidate.chunk.date })))) {
      if (hits.length === search.limit) break
      // A vector hit may come from a note changed since it was embedded; a lexical one is always current.
      if (hit.fromVectors && !(await this.hybrid!.isCurrent(folder, hit.chunk.source))) continue
      const { chunk, language, score, supersededBy } = hit
      hits.push({
        source: chunk.source,
        date: chunk.date,
        content: snippet(chunk.text, lexical.terms, language),
        score: Math.round(score * 1000) / 1000,
        ...(supersededBy && { supersededBy }),
      })
    }
    return hits
  }

  /** Brings every folder's vectors up to date in the background (at start). */
  async embedAll(): Promise<void> {
    for (const folder of await this.folders()) this.hybrid?.refresh(folder)
  }

  /** Embeds every folder's notes again, now (`npm run steward -- memory reindex`). */
  async reindex(): Promise<SyncInfo[]> {
    if (!this.hybrid) throw new Error("memory: no embedding model to reindex with")
    const done: SyncInfo[] = []
    for (const folder of await this.folders()) done.push(await this.hybrid.reindex(folder))
    return done
  }

  /** Rebuilds `user`'s index now (normally it happens when enough notes changed). */
  async rebuild(user: string): Promise<IndexInfo> {
    return this.scope(user).rebuild()
  }

  /** Stops every index worker and waits for a running embedding sync. */
  async close(): Promise<void> {
    const scopes = [...this.scopes.values()]
    this.scopes.clear()
    for (const { idle } of scopes) clearTimeout(idle)
    await Promise.all([...scopes.map(({ index }) => index.close()), this.hybrid?.close()])
  }

  /** The memory folders that exist: the shared one, or one per user. */
  private async folders(): Promise<string[]> {
    if (this.options.scope === "shared") return [memoryFolder(this.options.dir, "shared", "")]
    const entries = await readdir(this.options.dir, { withFileTypes: true }).catch(() => [])
    return entries.filter((entry) => entry.isDirectory()).map((entry) => path.join(this.options.dir, entry.name))
  }

  private scope(user: string): ScopeIndex {
    const folder = this.folder(user)
    const open = this.scopes.get(folder)
    if (open) {
      open.idle.refresh()
      return open.index
    }
    const index = new ScopeIndex(folder, this.scopeOptions)
    const idle = setTimeout(() => {
      this.scopes.delete(folder)
      index.close().catch(this.scopeOptions.onError)
    }, this.idleMs)
    idle.unref()
    this.scopes.set(folder, { index, idle })
    return index
  }

  /**
   * Appends `heading` + `body` to a note unless `written(existing text)` says the entry is
   * already there; one append at a time per file, so that check holds.
   */
  private async appendEntry(folder: string, source: string, heading: string, body: string, written: (existing: string) => boolean | Promise<boolean>): Promise<string> {
    const file = path.join(folder, source)
    await this.locked(file, async () => {
      await mkdir(path.dirname(file), { recursive: true })
      const existing = await readIfAny(file)
      if (await written(existing)) return
      // A blank line before the heading, also after a hand-edited file that lacks a final newline.
      const separator = existing === "" || existing.endsWith("\n\n") ? "" : existing.endsWith("\n") ? "\n" : "\n\n"
      await appendFile(file, separator + entryText(heading, body))
    })
    return source
  }

  private async locked(key: string, work: () => Promise<void>): Promise<void> {
    const previous = this.locks.get(key) ?? Promise.resolve()
    const run = previous.then(work)
    const settled = run.catch(() => {})
    this.locks.set(key, settled)
    try {
      await run
    } finally {
      if (this.locks.get(key) === settled) this.locks.delete(key)
    }
  }
}

/** `hit` with its fact read only when the recency prior asks (most pairs of hits never get that far): a search stays within its time. */
function withLazyFact<T extends { chunk: { text: string } }>(hit: T): T & { readonly fact?: Fact } {
  let read: { fact?: Fact } | undefined
  return Object.defineProperty(hit, "fact", { get: () => (read ??= { fact: factOf(hit.chunk.text) }).fact, enumerable: false }) as T & { readonly fact?: Fact }
}

function entryText(heading: string, body: string): string {
  return `${heading}\n\n${body.trim()}\n`
}

function summaryNote(day: Date): string {
  return `${DAILY_FOLDER}/${localDay(day)}-conversation-summary.md`
}

const TIME_HEADING = /(?:^|\n)## \d\d:\d\d$/

/** True when `text` (a summary note) has an entry `## HH:MM` whose whole body is `body`. */
function hasSummary(text: string, body: string): boolean {
  const needle = `\n\n${body}\n`
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + 1)) {
    const end = at + needle.length
    const endsEntry = end === text.length || text.startsWith("\n", end)
    if (endsEntry && TIME_HEADING.test(text.slice(Math.max(0, at - 9), at))) return true
  }
  return false
}

async function readIfAny(file: string): Promise<string> {
  return readFile(file, "utf8").catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return ""
    throw error
  })
}

/** Creates memory/YYYY-MM-DD-<slug>[-N].md with `wx`, so concurrent writers never overwrite each other. */
async function writeDailyNote(folder: string, now: Date, content: string): Promise<string> {
  const base = `${localDay(now)}-${slugify(content)}`
  const text = `${content.trim()}\n`
  await mkdir(path.join(folder, DAILY_FOLDER), { recursive: true })
  for (let n = 1; n <= MAX_SAME_NAME; n++) {
    const source = `${DAILY_FOLDER}/${n === 1 ? base : `${base}-${n}`}.md`
    const file = path.join(folder, source)
    try {
      await writeFile(file, text, { flag: "wx" })
      return source
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
      if ((await readFile(file, "utf8").catch(() => "")) === text) return source
    }
  }
  throw new Error(`memory: more than ${MAX_SAME_NAME} notes named ${base} today`)
}
