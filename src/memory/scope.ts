/**
 * Search over one memory folder, kept fresh without blocking the event loop.
 *
 * The index (bm25.ts) lives in the worker thread that built it; searches are posted to it.
 * Notes changed since that build form the "delta": the main thread holds their current chunks
 * and scores them by brute force with the index's statistics, while index hits from their
 * stale versions are excluded. When the delta grows past a threshold, a new worker builds a
 * fresh index from the files and replaces the old one; until then both keep answering, so a
 * note written a moment ago is found at once however large the memory is.
 *
 * While no index serves (a folder's first search, after an idle folder was closed, after its
 * worker died) a search does not wait seconds for a build: first a worker that only reads and
 * tokenises the notes serves, scoring every chunk per search with the same BM25 (bm25.ts
 * rank()); then the index is built and replaces it like any rebuild. Scoring in a worker keeps
 * the corpus, and collecting its garbage, off the main thread (on it, 10,000 chunks meant
 * 35–65 ms garbage-collection pauses).
 *
 * Changes are noticed with fs.watch on the two note folders plus Steward's own writes, so a
 * search costs a few dirty-file stats rather than one stat per note (thousands of notes take
 * tens of milliseconds to stat). Where watching is not available every search stats every note.
 */
import { watch, type FSWatcher } from "node:fs"
import { mkdir } from "node:fs/promises"
import path from "node:path"
import { setImmediate as nextTurn } from "node:timers/promises"
import { combine, rank, statsOf, vocabularyOf, withTerms, type ChunkFilter, type Scored, type TermChunk } from "./bm25.ts"
import { corrections, merge, wordBit } from "./expand.ts"
import { IndexWorker } from "./index-client.ts"
import type { Ready } from "./index-worker.ts"
import { DAILY_FOLDER, isNoteName, listNotes, readNote, sameStamp, statNote, type Chunk, type Stamp } from "./notes.ts"
import { Supersession, updatesOf, type Update } from "./supersede.ts"
import { queryWords } from "./text.ts"
import type { Vocabulary } from "./vocabulary.ts"
/** Longest run of main-thread tokenising (a large changed note) between yields. */
const YIELD_AFTER_MS = 8

export interface ScopeSearch {
  query: string
  /** Inclusive YYYY-MM-DD bounds on the note's date. */
  after?: string
  before?: string
  limit: number
}

export interface ScopeResult {
  /** Best first by BM25, at most `limit`. */
  hits: Scored[]
  /** Every term searched for, corrections included: what a snippet centres on. */
  terms: Set<string>
  /** Which notes replaced which, as of this search (supersede.ts). */
  supersession: Supersession
  /** How many query words a hit's `covers` and `matches` bits stand for (at most 31). */
  words: number
}

export interface IndexInfo {
  folder: string
  files: number
  chunks: number
  /** Bytes on the index worker's heap after the build. */
  heapUsed: number
  /** From starting the worker to serving from the new index. */
  ms: number
}

export interface ScopeOptions {
  /** Delta size (chunks, a deleted note counting one) above which the index is rebuilt. */
  rebuildThreshold: number
  /** false: stat every note on each search instead of relying on fs.watch. */
  watch: boolean
  onIndexed: (info: IndexInfo) => void
  onError: (error: unknown) => void
}

/** A note whose current version is not the indexed one; no stamp means it was deleted. */
interface Changed {
  stamp?: Stamp
  chunks: TermChunk[]
}

export class ScopeIndex {
  /** The version of each note the serving index holds. */
  private indexed = new Map<string, Stamp>()
  /** The serving index's chunks that announce a change. */
  private indexedUpdates: Update[] = []
  /** Built when a search needs it and dropped when the index or the delta changes. */
  private supersession?: Supersession
  private readonly delta = new Map<string, Changed>()
  /** The delta's vocabulary, built when a search needs it and dropped when the delta changes. */
  private deltaVocabulary?: Vocabulary
  /** Notes that may have changed since they were last looked at. */
  private readonly dirty = new Set<string>()
  private rescan = false
  private readonly watchers = new Map<string, FSWatcher>()
  private watching: boolean
  private serving?: IndexWorker
  private starting?: IndexWorker
  /** A brute-force stand-in being started while no index serves; resolves once it serves or is not needed. */
  private standingIn?: Promise<void>
  private standIn?: IndexWorker
  private building?: Promise<IndexInfo>
  private queued?: Promise<IndexInfo>
  /** Changes to `indexed` and `delta` run one after another on this chain. */
  private updates: Promise<unknown> = Promise.resolve()
  private readonly opened: Promise<void>
  private closed = false

  constructor(
    readonly dir: string,
    private readonly options: ScopeOptions,
  ) {
    this.watching = options.watch
    this.opened = this.open()
    // Surfaced by the first search or rebuild that awaits it.
    this.opened.catch(() => {})
  }

  /** Steward wrote this note; the next search picks it up without waiting for the watcher. */
  noteChanged(source: string): void {
    this.dirty.add(source)
  }

  async search(search: ScopeSearch): Promise<ScopeResult> {
    await this.opened
    await this.update(() => this.sync())
    if (!this.serving) await this.firstServing()
    const serving = this.serving
    if (!serving) throw new Error("the memory index is not available")
    // Read in the same turn as `serving`, so the delta matches the index even if a rebuild swaps them.
    const fresh = [...this.delta.values()].flatMap((note) => note.chunks)
    const freshVocabulary = (this.deltaVocabulary ??= vocabularyOf(fresh))
    const supersession = (this.supersession ??= new Supersession([...this.indexedUpdates.filter((update) => !this.delta.has(update.source)), ...updatesOf(fresh)]))
    const words = queryWords(search.query)
    const known = words.flatMap((word) => word.forms.flatMap((form) => form.terms)).filter((term) => freshVocabulary.has(term))
    const { limit, after, before } = search
    const { hits, terms, unresolved, stats } = await serving.search({ words, known, after, before, limit, exclude: [...this.delta.keys()] })
    // Words neither the index nor the delta knows: the delta's own corrections join the index's.
    const all = new Map(terms.map((term) => [term.term, term]))
    for (const i of unresolved) for (const correction of corrections(words[i]!, freshVocabulary)) merge(all, { ...correction, words: wordBit(i) })
    const query = { terms: [...all.keys()], weights: [...all.values()].map((t) => t.weight), words: [...all.values()].map((t) => t.words) }
    const filter: ChunkFilter = { after, before }
    const freshHits = rank(fresh, query, combine(stats, statsOf(fresh, query.terms)), filter, limit)
    const indexHits = hits.map(({ score, language, covers, matches, ...chunk }) => ({ chunk, language, score, covers, matches }))
    return { hits: [...indexHits, ...freshHits].sort((a, b) => b.score - a.score).slice(0, limit), terms: new Set(query.terms), supersession, words: Math.min(words.length, 31) }
  }

  /** Builds a new index from the files; resolves once it serves. Calls during a build queue one more. */
  rebuild(): Promise<IndexInfo> {
    if (this.building) {
      this.queued ??= this.building
        .catch(() => undefined)
        .then(() => {
          this.queued = undefined
          return this.rebuild()
        })
      return this.queued
    }
    this.building = this.build().finally(() => {
      this.building = undefined
    })
    return this.building
  }

  async close(): Promise<void> {
    this.closed = true
    this.stopWatching()
    await Promise.all([this.serving?.terminate(), this.starting?.terminate(), this.standIn?.terminate()])
    await Promise.all([this.building?.catch(() => {}), this.standingIn?.catch(() => {})])
  }

  /**
   * Resolves once something serves: a brute-force stand-in, which only reads and tokenises the
   * notes (at 10,000 chunks well under half of a build), or, if it fails, the built index.
   */
  private async firstServing(): Promise<void> {
    this.standingIn ??= this.startStandIn().finally(() => {
      this.standingIn = undefined
    })
    try {
      await this.standingIn
    } catch (error) {
      if (this.closed) throw error
      this.failed(error)
      await (this.building ?? this.rebuild())
    }
  }

  /**
   * Starts the stand-in; once it serves, builds the real index. One after the other, not side
   * by side: on two cores the two workers' reading and tokenising would slow each other down.
   */
  private async startStandIn(): Promise<void> {
    const worker = new IndexWorker(this.dir, { bruteForce: true }, (gone) => this.onWorkerExit(gone))
    this.standIn = worker
    try {
      const ready = await worker.ready
      await this.update(() => {
        // An index built meanwhile (rebuild() was called) is better than the stand-in.
        if (this.serving) void worker.terminate()
        else this.swap(worker, ready)
      })
    } catch (error) {
      void worker.terminate()
      throw error
    } finally {
      if (this.standIn === worker) this.standIn = undefined
    }
    if (this.serving === worker && !this.building) this.rebuild().catch((error) => this.failed(error))
  }

  private onWorkerExit(gone: IndexWorker): void {
    if (this.serving === gone) this.serving = undefined
  }

  private async open(): Promise<void> {
    await mkdir(path.join(this.dir, DAILY_FOLDER), { recursive: true })
    this.watch(this.dir, "")
    this.watch(path.join(this.dir, DAILY_FOLDER), `${DAILY_FOLDER}/`)
  }

  private watch(folder: string, prefix: string): void {
    if (!this.watching || this.closed) return
    this.watchers.get(folder)?.close()
    this.watchers.delete(folder)
    try {
      const watcher = watch(folder, { persistent: false }, (_event, name) => this.onFileEvent(prefix, name))
      watcher.on("error", () => this.stopWatching())
      this.watchers.set(folder, watcher)
    } catch (error) {
      // A daily folder deleted by hand is watched again when the top watcher sees it return.
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") this.stopWatching()
    }
  }

  private onFileEvent(prefix: string, name: string | null): void {
    if (name === null) this.rescan = true
    else if (isNoteName(name)) this.dirty.add(prefix + name)
    else if (prefix === "" && name === DAILY_FOLDER) {
      // The folder was created, removed or replaced: the old watcher saw none of its files.
      this.rescan = true
      this.watch(path.join(this.dir, DAILY_FOLDER), `${DAILY_FOLDER}/`)
    }
  }

  private stopWatching(): void {
    this.watching = false
    for (const watcher of this.watchers.values()) watcher.close()
    this.watchers.clear()
  }

  private update<T>(change: () => Promise<T> | T): Promise<T> {
    const run = this.updates.then(change)
    this.updates = run.catch(() => {})
    return run
  }

  /** Brings the delta up to date with the files. */
  private async sync(): Promise<void> {
    // Lets fs.watch deliver the events the kernel has already queued (a note saved just now).
    await nextTurn()
    // Before the first build there is nothing to compare with: the build reads every note.
    if ((this.rescan || !this.watching) && this.serving) {
      this.rescan = false
      for (const source of [...(await listNotes(this.dir)), ...this.indexed.keys(), ...this.delta.keys()]) this.dirty.add(source)
    }
    for (const source of this.dirty) {
      this.dirty.delete(source)
      await this.reconcile(source)
    }
    const size = [...this.delta.values()].reduce((sum, note) => sum + Math.max(1, note.chunks.length), 0)
    // A brute-force stand-in serves only until the index it stands in for is built.
    const due = size > this.options.rebuildThreshold || this.serving?.bruteForce === true
    if (due && !this.building) this.rebuild().catch((error) => this.failed(error))
  }

  private async reconcile(source: string): Promise<void> {
    const known = this.delta.has(source) ? this.delta.get(source)!.stamp : this.indexed.get(source)
    const stamp = await statNote(this.dir, source)
    if (sameStamp(stamp, known)) return
    const note = stamp ? await readNote(this.dir, source) : undefined
    if (sameStamp(note?.stamp, this.indexed.get(source))) this.delta.delete(source)
    else this.delta.set(source, { stamp: note?.stamp, chunks: await prepare(note?.chunks ?? [], this.delta.get(source)?.chunks) })
    this.deltaVocabulary = undefined
    this.supersession = undefined
  }

  /** A background build failed; what serves keeps serving and a later search tries again. */
  private failed(error: unknown): void {
    if (!this.closed) this.options.onError(error)
  }

  private async build(): Promise<IndexInfo> {
    await this.opened
    if (this.closed) throw new Error("memory is closed")
    const started = performance.now()
    const worker = new IndexWorker(this.dir, {}, (gone) => this.onWorkerExit(gone))
    this.starting = worker
    try {
      const ready = await worker.ready
      await this.update(() => this.swap(worker, ready))
      const info = { folder: this.dir, files: ready.manifest.length, chunks: ready.chunks, heapUsed: ready.heapUsed, ms: performance.now() - started }
      this.options.onIndexed(info)
      return info
    } finally {
      if (this.starting === worker) this.starting = undefined
    }
  }

  private swap(worker: IndexWorker, ready: Ready): void {
    if (this.closed) {
      void worker.terminate()
      throw new Error("memory is closed")
    }
    this.serving?.retire()
    this.serving = worker
    this.indexed = new Map(ready.manifest)
    this.indexedUpdates = ready.updates
    this.supersession = undefined
    // Notes the new index read in their current version leave the delta; later edits stay.
    for (const [source, note] of this.delta) if (sameStamp(note.stamp, this.indexed.get(source))) this.delta.delete(source)
    this.deltaVocabulary = undefined
  }
}

/** Tokenises changed chunks, reusing the terms of chunks that did not change (an append to memory.md). */
async function prepare(chunks: Chunk[], previous: readonly TermChunk[] = []): Promise<TermChunk[]> {
  const known = new Map(previous.map((chunk) => [chunk.text, chunk]))
  const prepared: TermChunk[] = []
  let since = performance.now()
  for (const chunk of chunks) {
    const same = known.get(chunk.text)
    prepared.push(same ? { ...chunk, language: same.language, tf: same.tf, length: same.length } : withTerms(chunk))
    if (performance.now() - since > YIELD_AFTER_MS) {
      await nextTurn()
      since = performance.now()
    }
  }
  return prepared
}
