import type PgBoss from "pg-boss"
import { errorText } from "../core/errors.ts"
import type { ToolSummary } from "../core/types.ts"
import { claimId } from "../store/cluster-records.ts"
import type { ClaimRecord } from "../store/records.ts"
import type { AgentRunner } from "../supervisor/runner.ts"
import { Sessions } from "../supervisor/sessions.ts"
import { runOf, sessionOf, TimedOut } from "../supervisor/task-records.ts"
import type { NodeParts } from "./membership.ts"
import type { TaskJob } from "./queues.ts"

export const CLAIMS_CHANNEL = "steward_claims"
export const PROGRESS_CHANNEL = "steward_progress"
export const CANCEL_CHANNEL = "steward_cancel"
/** Postgres refuses a notification payload over 8000 bytes. */
const MAX_PAYLOAD = 7900
/** Tries at the write of a run's end (backing off to 10 s: about a minute and a half in all). */
const END_WRITE_ATTEMPTS = 12

/** Why a run of this process was cut short by its own stop: the claim is released, not failed. */
class Stopping extends Error {}

/**
 * Runs the task jobs this process claims, whichever process leads: the claim is written before
 * the run starts (with this process as its holder) and again with the outcome, which the leader
 * reads (remote-runs.ts). A job whose run is no longer the task's — the task moved on, or the
 * job was delivered again — is completed without running.
 */
export class TaskHost {
  private readonly runs = new Map<string, AbortController>()
  private readonly sessions: Sessions
  private stopped = false

  constructor(
    private readonly deps: NodeParts & {
      /** The runner to use now: its tools reach the leader's parts, here or over the queue. */
      runner: () => AgentRunner
      /** Before a run, when this process does not lead: what it keeps of the store is refreshed. */
      refresh: () => Promise<void>
    },
  ) {
    this.sessions = new Sessions(deps.store)
  }

  /** Handles one claimed job of `queue` and completes it. */
  async handle(queue: string, job: PgBoss.Job<TaskJob>): Promise<void> {
    try {
      await this.runClaimed(job.data)
    } finally {
      await this.deps.boss.complete(queue, job.id).catch((error: unknown) => this.deps.log.warn({ err: error, job: job.id }, "cluster: could not complete a task job"))
    }
  }

  /** The leader cancelled a run (`/stop`, cancel_task, its timeout). */
  cancel(id: string, reason: string): void {
    this.runs.get(id)?.abort(new Error(reason))
  }

  /** Cuts every run short: their claims are released, so the leader queues them again without
   *  counting the attempt. */
  stop(): void {
    this.stopped = true
    for (const controller of this.runs.values()) controller.abort(new Stopping("Steward is stopping"))
  }

  private async runClaimed({ taskId, run }: TaskJob): Promise<void> {
    const { store, membership, log } = this.deps
    const id = claimId(taskId, run)
    if (await store.cluster.claim(id)) return
    const task = await store.task(taskId)
    if (task?.status !== "running" || runOf(task) !== run) return
    const claim: ClaimRecord = { id, taskId, run, holder: membership.id, startedAt: new Date().toISOString(), status: "running" }
    await store.cluster.saveClaim(claim)
    const controller = new AbortController()
    this.runs.set(id, controller)
    // A job taken while this process stops is handed back at once.
    if (this.stopped) controller.abort(new Stopping("Steward is stopping"))
    // The run is timed where it runs: time spent waiting in the queue does not count.
    const seconds = task.timeout ?? this.deps.config.timeouts[task.role as "planner" | "worker"]
    const timer = setTimeout(() => controller.abort(new TimedOut(`timed out after ${seconds} s`)), seconds * 1000)
    let end: Pick<ClaimRecord, "status" | "result" | "error" | "timedOut">
    try {
      controller.signal.throwIfAborted()
      await membership.started(task, run)
      if (!membership.isLeader) await this.deps.refresh()
      const session = await this.sessions.open(sessionOf(task))
      const outcome = await this.deps.runner().runTask(task, session, controller.signal, (summary) => this.progress(taskId, summary))
      end = { status: "done", result: outcome.status === "done" ? outcome.text : "" }
    } catch (error) {
      const reason: unknown = controller.signal.reason
      end = reason instanceof Stopping ? { status: "released" } : { status: "failed", error: errorText(controller.signal.aborted ? reason : error), timedOut: reason instanceof TimedOut || undefined }
    } finally {
      clearTimeout(timer)
      this.runs.delete(id)
      this.sessions.forget(task.sessionId)
    }
    await this.recordEnd({ ...claim, ...end, endedAt: new Date().toISOString() })
    await membership.ended(taskId, run).catch((error: unknown) => log.warn({ err: error }, "cluster: could not update this process's record"))
    await this.deps.link.notify(CLAIMS_CHANNEL, id).catch((error: unknown) => log.warn({ err: error }, "cluster: could not announce a run's end"))
  }

  /** The run's end is what the leader waits for: a failed write is tried again (a database
   *  blip), for as long as the task's timeout would let the leader wait anyway. */
  private async recordEnd(claim: ClaimRecord): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.deps.store.cluster.saveClaim(claim)
      } catch (error) {
        if (attempt >= END_WRITE_ATTEMPTS) throw error
        this.deps.log.warn({ err: error, claim: claim.id, attempt }, "cluster: could not record a run's end; trying again")
        await new Promise((resolve) => setTimeout(resolve, Math.min(10_000, 200 * 2 ** attempt)))
      }
    }
  }

  private progress(taskId: string, summary: ToolSummary): void {
    const payload = JSON.stringify({ taskId, summary })
    if (payload.length > MAX_PAYLOAD) return
    this.deps.link.notify(PROGRESS_CHANNEL, payload).catch(() => {})
  }
}
