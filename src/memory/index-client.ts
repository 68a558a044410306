/** The main thread's side of an index worker (index-worker.ts). */
import { Worker } from "node:worker_threads"
import type { Ready, SearchReply, SearchRequest, WorkerInput } from "./index-worker.ts"

/** From the sources (tsx, vitest) the worker first registers tsx's loader (index-worker.mjs);
 *  the build (dist/) ships it compiled beside the bundle as index-worker.js. */
const WORKER_ENTRY = new URL(import.meta.url.endsWith(".ts") ? "./index-worker.mjs" : "./index-worker.js", import.meta.url)

type Answer = Extract<SearchReply, { hits: unknown }>

/** One index worker: resolves `ready` when built, then answers searches until stopped. */
export class IndexWorker {
  readonly ready: Promise<Ready>
  readonly bruteForce: boolean
  private readonly worker: Worker
  private readonly pending = new Map<number, { resolve: (answer: Answer) => void; reject: (error: Error) => void }>()
  private nextId = 0
  private retired = false
  private failure?: Error

  constructor(dir: string, { bruteForce = false }: { bruteForce?: boolean }, onExit: (worker: IndexWorker) => void) {
    this.bruteForce = bruteForce
    this.worker = new Worker(WORKER_ENTRY, { workerData: { dir, bruteForce } satisfies WorkerInput })
    let started!: (ready: Ready) => void
    let failed!: (error: Error) => void
    this.ready = new Promise((resolve, reject) => {
      started = resolve
      failed = reject
    })
    this.worker.on("message", (message: Ready | SearchReply) => ("type" in message ? started(message) : this.settle(message)))
    this.worker.on("error", (error) => {
      this.failure = error
    })
    this.worker.on("exit", (code) => {
      const error = this.failure ?? new Error(`the memory index worker stopped (exit code ${code})`)
      failed(error)
      for (const { reject } of this.pending.values()) reject(error)
      this.pending.clear()
      onExit(this)
    })
  }

  search(request: Omit<SearchRequest, "id">): Promise<Answer> {
    const id = this.nextId++
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject })
      this.worker.postMessage({ ...request, id } satisfies SearchRequest)
    })
  }

  /** Stops the worker once the searches it is answering are done. */
  retire(): void {
    this.retired = true
    if (this.pending.size === 0) void this.worker.terminate()
  }

  async terminate(): Promise<void> {
    await this.worker.terminate()
  }

  private settle(reply: SearchReply): void {
    const pending = this.pending.get(reply.id)
    this.pending.delete(reply.id)
    if ("error" in reply) pending?.reject(new Error(reply.error))
    else pending?.resolve(reply)
    if (this.retired && this.pending.size === 0) void this.worker.terminate()
  }
}
