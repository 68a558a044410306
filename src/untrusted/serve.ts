import { parentPort } from "node:worker_threads"

/** What a parser's worker answers: its result, a refusal (input over a limit, in one line for the
 *  user), or an error (input the parser could not read). */
export type WorkerReply<Result> = { ok: Result } | { refused: string } | { error: string }

/** Thrown inside a worker for input over one of its limits. */
export class OverLimit extends Error {
  override name = "OverLimit"
}

/** Serves a parser in a worker thread: one job at a time, each answered with a WorkerReply. */
export function serve<Job, Result>(parse: (job: Job) => Result | Promise<Result>): void {
  parentPort!.on("message", async (job: Job) => {
    let reply: WorkerReply<Result>
    try {
      reply = { ok: await parse(job) }
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error)
      reply = error instanceof OverLimit ? { refused: message } : { error: message }
    }
    parentPort!.postMessage(reply)
  })
}
