import { Worker } from "node:worker_threads"
import type { WorkerReply } from "./serve.ts"

/** Input a parser refused, or could not finish within its limits; `message` is one line for the
 *  person who sent the file or asked for the page. */
export class ParseRefused extends Error {
  override name = "ParseRefused"
}

export interface IsolationLimits {
  /** How long one job may take. */
  timeMs: number
  /** The worker's JavaScript heap (resourceLimits). */
  heapMb: number
  /** How much the process's resident memory may grow while the job runs (buffers included). */
  memoryGrowthMb: number
}

// Often enough to stop a parser inflating ~100 MB/s within a few MB of its limit.
const MEMORY_CHECK_MS = 50

/**
 * Jobs on untrusted bytes in worker threads that can be stopped without touching the server: a
 * heap limit (a worker over it ends, the process does not), a time budget and a watch on the
 * process's resident memory (what a parser keeps in buffers is outside its heap); a worker over
 * any of them is terminated, which frees what it held, and the job is refused with the reason.
 * Idle workers are kept (unreferenced, so they never keep the process alive) for the next job.
 */
export class IsolatedWorkers<Job, Result> {
  private readonly idle: Worker[] = []

  constructor(
    private readonly entry: URL,
    private readonly limits: IsolationLimits,
  ) {}

  async run(job: Job, signal: AbortSignal, transfer: ArrayBuffer[] = []): Promise<Result> {
    signal.throwIfAborted()
    const { timeMs, heapMb, memoryGrowthMb } = this.limits
    const worker = this.idle.pop() ?? new Worker(this.entry, { resourceLimits: { maxOldGenerationSizeMb: heapMb, maxYoungGenerationSizeMb: Math.min(64, heapMb / 4) } })
    worker.ref()
    let reusable = false
    try {
      const reply = await new Promise<WorkerReply<Result>>((resolve, reject) => {
        const fail = (error: unknown) => {
          settle()
          reject(error)
        }
        const timer = setTimeout(() => fail(new ParseRefused(`reading it took longer than ${timeMs / 1000} s`)), timeMs)
        const rssLimit = process.memoryUsage.rss() + memoryGrowthMb * 1024 * 1024
        const watch = setInterval(() => {
          if (process.memoryUsage.rss() > rssLimit) fail(new ParseRefused(`reading it needed more than ${memoryGrowthMb} MB of memory`))
        }, MEMORY_CHECK_MS)
        const stop = () => fail(signal.reason)
        signal.addEventListener("abort", stop, { once: true })
        const settle = () => {
          clearTimeout(timer)
          clearInterval(watch)
          signal.removeEventListener("abort", stop)
          worker.off("message", onMessage).off("error", onError).off("exit", onExit)
        }
        const onMessage = (message: WorkerReply<Result>) => {
          settle()
          resolve(message)
        }
        const onError = (error: Error & { code?: string }) =>
          fail(error.code === "ERR_WORKER_OUT_OF_MEMORY" ? new ParseRefused(`reading it needed more than ${heapMb} MB of memory`) : error)
        const onExit = (code: number) => fail(new Error(`the parser's worker stopped (exit code ${code})`))
        worker.on("message", onMessage).on("error", onError).on("exit", onExit)
        worker.postMessage(job, transfer)
      })
      reusable = true
      if ("refused" in reply) throw new ParseRefused(reply.refused)
      if ("error" in reply) throw new Error(reply.error)
      return reply.ok
    } finally {
      if (reusable) {
        worker.unref()
        this.idle.push(worker)
      } else void worker.terminate()
    }
  }
}

/** The bytes to move rather than copy to a worker, when they own their memory (Buffer.concat's
 *  do): a structured clone of megabytes is milliseconds of the main thread. */
export function ownedBuffer(bytes: Uint8Array): ArrayBuffer[] {
  const owned = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer
  return owned ? [bytes.buffer as ArrayBuffer] : []
}
