import { Worker } from "node:worker_threads"
import type { HtmlJob, HtmlResult } from "./html-text-worker.ts"

/** From the sources (tsx, vitest) the worker first registers tsx's loader (html-text-worker.mjs);
 *  the build (dist/) ships it compiled beside the bundle as html-text-worker.js. */
const WORKER_ENTRY = new URL(import.meta.url.endsWith(".ts") ? "./html-text-worker.mjs" : "./html-text-worker.js", import.meta.url)

/** A conversion that ran out of its time budget; the worker doing it was stopped. */
export class ConversionTimedOut extends Error {
  override name = "ConversionTimedOut"
}

/**
 * HTML to text in worker threads, so a large or pathological page never blocks the event loop
 * (a 2 MiB page of nested elements used to hold it for 25 s and more). Each conversion has a time
 * budget: a worker over it is terminated, which stops the work, and a fresh one serves the next.
 * Idle workers are kept (unreferenced, so they never keep the process alive) for the next page.
 */
export class HtmlToText {
  private readonly idle: Worker[] = []

  constructor(private readonly budgetMs: number) {}

  async convert(job: HtmlJob, signal: AbortSignal): Promise<{ text: string; cut: boolean }> {
    signal.throwIfAborted()
    const worker = this.idle.pop() ?? new Worker(WORKER_ENTRY)
    worker.ref()
    let reusable = false
    try {
      const result = await new Promise<HtmlResult>((resolve, reject) => {
        const fail = (error: unknown) => {
          settle()
          reject(error)
        }
        const timer = setTimeout(() => fail(new ConversionTimedOut(`converting the page took longer than ${this.budgetMs / 1000} s`)), this.budgetMs)
        const stop = () => fail(signal.reason)
        signal.addEventListener("abort", stop, { once: true })
        const settle = () => {
          clearTimeout(timer)
          signal.removeEventListener("abort", stop)
          worker.off("message", onMessage).off("error", onError).off("exit", onExit)
        }
        const onMessage = (message: HtmlResult) => {
          settle()
          resolve(message)
        }
        const onError = (error: Error) => fail(error)
        const onExit = (code: number) => fail(new Error(`the HTML conversion worker stopped (exit code ${code})`))
        worker.on("message", onMessage).on("error", onError).on("exit", onExit)
        // The page's bytes are moved, not copied, when they own their memory (Buffer.concat's do):
        // a structured clone of megabytes is milliseconds of the main thread.
        const owned = job.bytes.byteOffset === 0 && job.bytes.byteLength === job.bytes.buffer.byteLength && job.bytes.buffer instanceof ArrayBuffer
        worker.postMessage(job, owned ? [job.bytes.buffer as ArrayBuffer] : [])
      })
      reusable = true
      if ("error" in result) throw new Error(result.error)
      return result
    } finally {
      if (reusable) {
        worker.unref()
        this.idle.push(worker)
      } else void worker.terminate()
    }
  }
}
