import type PgBoss from "pg-boss"
import type { Logger } from "pino"
import { errorText } from "../core/errors.ts"
import { ToolError } from "../tool/tool.ts"
import type { ClusterLink } from "./link.ts"
import { CALL_QUEUE, Claimer, WAIT_QUEUE } from "./queues.ts"

const CALL_CHANNEL = "steward_call"
const DONE_CHANNEL = "steward_call_done"
/** Calls in hand at once on the leader, by queue: one that waits for a user holds its slot. */
const SERVED_AT_ONCE: Record<string, number> = { [CALL_QUEUE]: 64, [WAIT_QUEUE]: 1000 }

/** What a call's job ends with. A handler's error ends the call (a ToolError stays one for the
 *  model that made it); only a leader dying in the middle makes pg-boss try it again. */
interface CallOutput {
  value?: unknown
  error?: string
  toolError?: boolean
}

export type CallHandlers = Record<string, (...args: never[]) => Promise<unknown>>

/**
 * Calls from a process that does not lead to the parts only the leader runs (the task board,
 * scheduler, questions, outbox, inbound gate): a pg-boss job each, so a call outlives a leader
 * that dies — the next one takes it, and every handler is idempotent by the caller's origin.
 * The leader completes the job with the result and announces it; the caller reads the result.
 */
export class LeaderCalls {
  private readonly waiters = new Map<string, () => void>()
  private servers: Array<Claimer<{ method: string; args: unknown[] }>> = []
  private readonly stopping = new AbortController()

  constructor(
    private readonly boss: PgBoss,
    private readonly link: ClusterLink,
    private readonly log: Logger,
  ) {}

  /** Starts hearing that calls ended. */
  async start(): Promise<void> {
    await this.link.listen(DONE_CHANNEL, (id) => this.waiters.get(id)?.())
  }

  /**
   * Calls `method` on the leader and waits for its result. `expireSeconds`: how long the leader
   * may take before the call counts as lost with it (and is tried again); `waitMs`: give up
   * waiting after this long and resolve `undefined` — the call stays queued and will be made.
   */
  async call<T>(method: string, args: unknown[], { expireSeconds = 60, waitMs, signal, waitsForUser = false }: { expireSeconds?: number; waitMs?: number; signal?: AbortSignal; waitsForUser?: boolean } = {}): Promise<T | undefined> {
    const queue = waitsForUser ? WAIT_QUEUE : CALL_QUEUE
    const id = await this.boss.send(queue, { method, args }, { retryLimit: 3, retryDelay: 1, expireInSeconds: expireSeconds })
    if (!id) throw new Error(`the call ${method} was not queued`)
    await this.link.notify(CALL_CHANNEL, method).catch(() => {})
    const deadline = waitMs === undefined ? Infinity : Date.now() + waitMs
    const wake = () => this.waiters.get(id)?.()
    signal?.addEventListener("abort", wake, { once: true })
    try {
      for (;;) {
        // The run that made the call was cut short (its task cancelled, timed out, stopped).
        signal?.throwIfAborted()
        const woken = new Promise<void>((resolve) => {
          this.waiters.set(id, resolve)
          // A missed notification costs at most a second.
          setTimeout(resolve, Math.min(1000, Math.max(0, deadline - Date.now()))).unref()
        })
        const job = await this.boss.getJobById<unknown>(queue, id, { includeArchive: true })
        if (job?.state === "completed") return answer<T>(job.output as CallOutput)
        if (!job || job.state === "failed" || job.state === "cancelled") throw new Error(`the leader could not take the call ${method}`)
        if (Date.now() >= deadline) return undefined
        await woken
      }
    } finally {
      this.waiters.delete(id)
      signal?.removeEventListener("abort", wake)
    }
  }

  /** Aborted when this process stops serving: a handler waiting on the user (an approval) gives
   *  up its slot and the call goes back to the queue for the next leader. */
  get stopSignal(): AbortSignal {
    return this.stopping.signal
  }

  /** On the leader: takes calls and answers them with `handlers`. */
  async serve(handlers: CallHandlers): Promise<void> {
    // Calls taken and not ended now can only be a dead leader's (one that stops hands its calls
    // back first): failed, they are tried again at once instead of at their expiry.
    for (const queue of [CALL_QUEUE, WAIT_QUEUE]) {
      const orphans = await this.link.activeJobs(queue)
      if (orphans.length > 0) await this.boss.fail(queue, orphans)
    }
    this.servers = [CALL_QUEUE, WAIT_QUEUE].map((queue) => new Claimer<{ method: string; args: unknown[] }>(this.boss, queue, SERVED_AT_ONCE[queue], (job) => this.answer(queue, job, handlers), this.log))
    await this.link.listen(CALL_CHANNEL, () => this.servers.forEach((server) => server.wake()))
    for (const server of this.servers) server.start()
  }

  async stop(): Promise<void> {
    this.stopping.abort(new Error("this process no longer serves leader calls"))
    await Promise.all(this.servers.map((server) => server.stop()))
  }

  private async answer(queue: string, job: PgBoss.Job<{ method: string; args: unknown[] }>, handlers: CallHandlers): Promise<void> {
    const handler = handlers[job.data.method] as ((...args: unknown[]) => Promise<unknown>) | undefined
    let output: CallOutput
    try {
      if (!handler) throw new Error(`no such call: ${job.data.method}`)
      output = { value: await handler(...job.data.args) }
    } catch (error) {
      // Cut short by this process's stop: failed, so pg-boss retries it with the next leader.
      if (this.stopping.signal.aborted) return void (await this.boss.fail(queue, job.id).catch(() => {}))
      output = { error: errorText(error), toolError: error instanceof ToolError }
    }
    await this.boss.complete(queue, job.id, output as object)
    await this.link.notify(DONE_CHANNEL, job.id).catch(() => {})
  }
}

function answer<T>(output: CallOutput | null): T {
  if (output?.error !== undefined) throw output.toolError ? new ToolError(output.error) : new Error(output.error)
  return output?.value as T
}
