import { IsolatedWorkers, ownedBuffer } from "../untrusted/isolated.ts"
import { PARSER_HEAP_MB, PARSER_MEMORY_GROWTH_MB } from "../untrusted/limits.ts"
import type { HtmlJob, HtmlText } from "./html-text-worker.ts"

// Under tsx (tests, `npm run dev`) the .mjs entry registers the loader; the build emits the .js.
const WORKER_ENTRY = new URL(import.meta.url.endsWith(".ts") ? "./html-text-worker.mjs" : "./html-text-worker.js", import.meta.url)

/**
 * HTML to text in worker threads, so a large or pathological page never blocks the event loop
 * (a 2 MiB page of nested elements used to hold it for 25 s and more) nor fills the server's
 * memory: each conversion has a time budget and the parsers' memory limits (IsolatedWorkers).
 */
export class HtmlToText {
  private readonly workers: IsolatedWorkers<HtmlJob, HtmlText>

  constructor(budgetMs: number) {
    this.workers = new IsolatedWorkers(WORKER_ENTRY, { timeMs: budgetMs, heapMb: PARSER_HEAP_MB, memoryGrowthMb: PARSER_MEMORY_GROWTH_MB })
  }

  convert(job: HtmlJob, signal: AbortSignal): Promise<HtmlText> {
    return this.workers.run(job, signal, ownedBuffer(job.bytes))
  }
}
