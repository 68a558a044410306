/**
 * The chunk vectors of one memory folder: kept in step with the notes by sync(), which embeds
 * only chunks whose text it has no vector for (a chunk is keyed by a hash of its text, so a
 * renamed note or one whose other sections changed costs nothing), and searched by brute force
 * over one contiguous matrix. Vectors are loaded from and saved to a VectorStore with the
 * model's name; vectors of another model are not used, so a change of model re-embeds.
 */
import { createHash } from "node:crypto"
import { FOUND_WITHIN, probesOf, trustOf } from "./calibrate.ts"
import { EMBED_BATCH, type Embedder } from "./embedder.ts"
import { listNotes, readNote, sameStamp, statNote, type Chunk, type Stamp } from "./notes.ts"
import type { VectorStore } from "./vector-store.ts"

/** How long one batch of chunks may take to embed before the sync gives up (and tries later). */
const BATCH_TIMEOUT_MS = 120_000

export interface VectorEntry extends Chunk {
  key: string
}

export interface VectorHit {
  entry: VectorEntry
  /** Cosine similarity. */
  score: number
}

export interface SyncInfo {
  folder: string
  chunks: number
  /** Chunks embedded by this sync. */
  embedded: number
  /** How far the model can be trusted on these notes (calibrate.ts), 0–1. */
  trust: number
}

export class FolderVectors {
  private notes = new Map<string, { stamp: Stamp; entries: VectorEntry[] }>()
  private vectors = new Map<string, Float32Array>()
  private loaded = false
  private rows: VectorEntry[] = []
  private matrix = new Float32Array(0)
  private dims = 0
  /** calibrate.ts's trust in the model on these notes; undefined until measured. */
  private measured?: number
  private running?: Promise<SyncInfo>
  private queued?: Promise<SyncInfo>

  constructor(
    readonly dir: string,
    private readonly embedder: Embedder,
    private readonly store: VectorStore,
  ) {}

  /**
   * Brings the vectors up to date with the notes. `force`: drop every vector and embed all
   * chunks again. `signal` stops it between batches and aborts the batch being embedded. One
   * sync at a time; a call during a sync runs one more after it.
   */
  sync(options: { force?: boolean; signal?: AbortSignal } = {}): Promise<SyncInfo> {
    if (!this.running) {
      this.running = this.run(options.force ?? false, options.signal).finally(() => (this.running = undefined))
      return this.running
    }
    this.queued ??= this.running
      .catch(() => undefined)
      .then(() => {
        this.queued = undefined
        return this.sync(options)
      })
    return this.queued
  }

  /** How much say the vector ranking gets (calibrate.ts): 0 until measured. */
  get trust(): number {
    return this.measured ?? 0
  }

  /** The version of `source` the vectors were made from. */
  stampOf(source: string): Stamp | undefined {
    return this.notes.get(source)?.stamp
  }

  /** The `limit` chunks most similar to `query` dated within the inclusive YYYY-MM-DD bounds. */
  search(query: Float32Array, filter: { after?: string; before?: string }, limit: number): VectorHit[] {
    const dims = this.dims
    if (query.length !== dims || dims === 0) return []
    const top: VectorHit[] = []
    const matrix = this.matrix
    for (let row = 0; row < this.rows.length; row++) {
      const entry = this.rows[row]!
      if ((filter.after && entry.date < filter.after) || (filter.before && entry.date > filter.before)) continue
      let score = 0
      for (let i = 0, at = row * dims; i < dims; i++, at++) score += matrix[at]! * query[i]!
      if (top.length === limit && score <= top[limit - 1]!.score) continue
      let at = top.length
      while (at > 0 && top[at - 1]!.score < score) at--
      top.splice(at, 0, { entry, score })
      if (top.length > limit) top.pop()
    }
    return top
  }

  private async run(force: boolean, signal?: AbortSignal): Promise<SyncInfo> {
    // A forced sync, or vectors of another model, must be written over even if nothing is left to embed.
    let rewrite = force
    if (!this.loaded || force) {
      const stored = force ? undefined : await this.store.load(this.dir)
      this.vectors = stored?.model === this.embedder.model ? stored.vectors : new Map()
      rewrite ||= stored !== undefined && stored.model !== this.embedder.model
      this.loaded = true
    }
    await this.readNotes()
    const missing = new Map<string, string>()
    for (const { entries } of this.notes.values()) for (const entry of entries) if (!this.vectors.has(entry.key)) missing.set(entry.key, entry.text)
    let embedded = 0
    try {
      const pending = [...missing]
      for (let i = 0; i < pending.length; i += EMBED_BATCH) {
        const batch = pending.slice(i, i + EMBED_BATCH)
        signal?.throwIfAborted()
        const deadline = AbortSignal.timeout(BATCH_TIMEOUT_MS)
        const vectors = await this.embedder.embed(
          batch.map(([, text]) => text),
          signal ? AbortSignal.any([signal, deadline]) : deadline,
        )
        batch.forEach(([key], j) => this.vectors.set(key, vectors[j]!))
        embedded += batch.length
        // Searchable batch by batch: a first sync of a large memory takes minutes.
        this.layOut()
        if (this.measured === undefined) await this.calibrate(signal)
      }
    } finally {
      await this.save(rewrite || embedded > 0)
    }
    this.layOut()
    if (embedded > 0 || this.measured === undefined) await this.calibrate(signal)
    return { folder: this.dir, chunks: this.rows.length, embedded, trust: this.trust }
  }

  /** Measures how well the model finds these notes by a few of their own words (calibrate.ts). */
  private async calibrate(signal?: AbortSignal): Promise<void> {
    const probes = probesOf(this.rows)
    const vectors = probes.length === 0 ? [] : await this.embedder.embed(probes.map((probe) => probe.text), signal)
    let found = 0
    probes.forEach((probe, i) => {
      if (this.search(vectors[i]!, {}, FOUND_WITHIN).some((hit) => hit.entry === this.rows[probe.row])) found++
    })
    this.measured = trustOf(found, probes.length, this.rows.length)
  }

  /** Re-reads the notes whose file changed; forgets deleted ones. */
  private async readNotes(): Promise<void> {
    const next = new Map<string, { stamp: Stamp; entries: VectorEntry[] }>()
    for (const source of await listNotes(this.dir)) {
      const known = this.notes.get(source)
      const stamp = await statNote(this.dir, source)
      if (!stamp) continue
      if (known && sameStamp(known.stamp, stamp)) {
        next.set(source, known)
        continue
      }
      const note = await readNote(this.dir, source)
      if (note) next.set(source, { stamp: note.stamp, entries: note.chunks.map((chunk) => ({ ...chunk, key: keyOf(chunk.text) })) })
    }
    this.notes = next
  }

  /** Keeps and saves the vectors of current chunks only, so those of deleted text do not pile up. */
  private async save(changed: boolean): Promise<void> {
    const used = new Map<string, Float32Array>()
    for (const { entries } of this.notes.values()) for (const { key } of entries) if (this.vectors.has(key)) used.set(key, this.vectors.get(key)!)
    const dropped = used.size !== this.vectors.size
    this.vectors = used
    if (changed || dropped) await this.store.save(this.dir, { model: this.embedder.model, vectors: used })
  }

  /** Copies the vectors of current chunks into one matrix, row by row. */
  private layOut(): void {
    const rows: VectorEntry[] = []
    for (const { entries } of this.notes.values()) for (const entry of entries) if (this.vectors.has(entry.key)) rows.push(entry)
    const dims = rows.length === 0 ? 0 : this.vectors.get(rows[0]!.key)!.length
    const matrix = new Float32Array(rows.length * dims)
    const kept: VectorEntry[] = []
    for (const entry of rows) {
      const vector = this.vectors.get(entry.key)!
      if (vector.length !== dims) continue
      matrix.set(vector, kept.length * dims)
      kept.push(entry)
    }
    this.rows = kept
    this.matrix = matrix
    this.dims = dims
  }
}

function keyOf(text: string): string {
  return createHash("sha256").update(text).digest("base64url").slice(0, 22)
}
