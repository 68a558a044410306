import type { LoopOutcome } from "../agent/loop.ts"
import { errorText } from "../core/errors.ts"
import type { TaskRecord, ToolSummary } from "../core/types.ts"
import { claimId } from "../store/cluster-records.ts"
import type { ClaimRecord } from "../store/records.ts"
import { HandedOver, Interrupted, runOf, TimedOut } from "../supervisor/task-records.ts"
import type { NodeParts } from "./membership.ts"
import { dispatchTask, jobIdOf, TASK_QUEUES } from "./queues.ts"
import { CANCEL_CHANNEL, CLAIMS_CHANNEL, PROGRESS_CHANNEL } from "./task-host.ts"

/** Claims of runs that ended are dropped after this long: the task record holds the outcome. */
const CLAIMS_KEPT_MS = 3600_000
/** How often the leader asks which processes are alive: a process killed is seen within this. */
const LIVENESS_TICK_MS = 500

interface Waiter {
  task: TaskRecord
  sentAt: number
  resolve: (outcome: LoopOutcome) => void
  reject: (error: unknown) => void
  onTool: (summary: ToolSummary) => void
}

/**
 * The leader's side of a task run in a cluster: the task board's `run`. It puts the run on the
 * queue and waits for its claim to end (task-host.ts). When a process dies (seen within half a
 * second) and every half lease, it looks at the runs it waits for: a holder no longer alive, or
 * a job taken but never claimed, interrupts the run, and the board queues the task again as a
 * new attempt.
 */
export class RemoteRuns {
  private readonly waiting = new Map<string, Waiter>()
  private timer: NodeJS.Timeout | undefined
  private sweeping = false
  private lastSweep = 0
  private lastAlive = new Set<string>()

  constructor(
    private readonly deps: NodeParts & { stopping: () => boolean },
  ) {}

  /** Starts following claims, progress and lost runs (once this process leads). */
  async start(): Promise<void> {
    const { link } = this.deps
    await link.listen(CLAIMS_CHANNEL, (id) => void this.check(id).catch((error: unknown) => this.deps.log.warn({ err: error }, "cluster: could not read a run's claim")))
    await link.listen(PROGRESS_CHANNEL, (payload) => this.progress(payload))
    this.timer = setInterval(() => void this.tick(), Math.min(LIVENESS_TICK_MS, this.deps.config.cluster.leaseSeconds * 500))
    this.timer.unref()
  }

  stop(): void {
    clearInterval(this.timer)
  }

  readonly run = (task: TaskRecord, signal: AbortSignal, onTool: (summary: ToolSummary) => void): Promise<LoopOutcome> => {
    const id = claimId(task.id, runOf(task))
    const outcome = new Promise<LoopOutcome>((resolve, reject) => this.waiting.set(id, { task, sentAt: Date.now(), resolve, reject, onTool }))
    const aborted = () => {
      if (!this.waiting.has(id)) return
      // A leader that stops leaves the run to go on; its successor follows it (recovery.ts).
      if (this.deps.stopping()) return this.finish(id, (waiter) => waiter.reject(new HandedOver("left to the next leader")))
      void this.deps.link.notify(CANCEL_CHANNEL, JSON.stringify({ id, reason: errorText(signal.reason) })).catch(() => {})
      this.finish(id, (waiter) => waiter.reject(signal.reason))
    }
    // Aborted already (a stop while the board wrote the task running): no event would come.
    if (signal.aborted) {
      aborted()
      return outcome
    }
    signal.addEventListener("abort", aborted, { once: true })
    void this.dispatch(id, task)
    return outcome
  }

  /** Queues the run. Only a failed send interrupts it (the board queues it again, counted, so a
   *  database that stays down fails the task in the end); the wake-up and the first look are
   *  made up for by the sweep. */
  private async dispatch(id: string, task: TaskRecord): Promise<void> {
    try {
      await dispatchTask(this.deps.boss, task, this.timeoutOf(task), this.deps.config.cluster.leaseSeconds)
    } catch (error) {
      return this.finish(id, (waiter) => waiter.reject(new Interrupted(`it could not be queued: ${errorText(error)}`, true)))
    }
    await this.deps.link.notify("steward_work", task.role).catch((error: unknown) => this.deps.log.warn({ err: error }, "cluster: could not announce a queued task"))
    // Taken over from another leader: the run may have ended already.
    await this.check(id).catch((error: unknown) => this.deps.log.warn({ err: error }, "cluster: could not read a run's claim"))
  }

  private timeoutOf(task: TaskRecord): number {
    return task.timeout ?? this.deps.config.timeouts[task.role as "planner" | "worker"]
  }

  private async check(id: string): Promise<void> {
    if (this.waiting.has(id)) this.settle(id, await this.deps.store.cluster.claim(id))
  }

  /** Ends the wait for a run whose claim has ended. */
  private settle(id: string, claim: ClaimRecord | undefined): void {
    if (claim?.status === "done") this.finish(id, (waiter) => waiter.resolve({ status: "done", text: claim.result ?? "" }))
    else if (claim?.status === "failed") this.finish(id, (waiter) => waiter.reject(new (claim.timedOut ? TimedOut : Error)(claim.error ?? "the run failed")))
    else if (claim?.status === "released") this.finish(id, (waiter) => waiter.reject(new Interrupted("the process running it stopped", false)))
  }

  /** Looks at every run waited for when a process has died since the last look, and every half
   *  lease anyway (a job never claimed, a notification missed). */
  private async tick(): Promise<void> {
    if (this.sweeping) return
    this.sweeping = true
    try {
      const alive = await this.deps.membership.alive()
      const died = [...this.lastAlive].some((id) => !alive.has(id))
      this.lastAlive = alive
      if (died || Date.now() - this.lastSweep >= this.deps.config.cluster.leaseSeconds * 500) await this.sweep()
    } catch (error) {
      this.deps.log.warn({ err: error }, "cluster: could not check the runs under way")
    } finally {
      this.sweeping = false
    }
  }

  /** Every waiter whose run is lost is interrupted; missed notifications are made up for. */
  private async sweep(): Promise<void> {
    this.lastSweep = Date.now()
    const leaseMs = this.deps.config.cluster.leaseSeconds * 1000
    const claims = new Map<string, ClaimRecord | undefined>()
    for (const id of [...this.waiting.keys()]) claims.set(id, await this.deps.store.cluster.claim(id))
    // Read after the claims: a process is on record before it claims anything, so every holder
    // read above is in it unless it has died since.
    const alive = await this.deps.membership.alive()
    for (const [id, claim] of claims) {
      const waiter = this.waiting.get(id)
      if (!waiter) continue
      if (claim && claim.status !== "running") this.settle(id, claim)
      else if (claim && !alive.has(claim.holder)) await this.lose(id, claim, `the process running it (${claim.holder}) died`)
      // Its holder's word on the end never came (a write that kept failing): timed out.
      else if (claim && Date.now() - Date.parse(claim.startedAt) > (this.timeoutOf(waiter.task) * 1000 + 2 * leaseMs)) this.finish(id, (w) => w.reject(new TimedOut(`timed out after ${this.timeoutOf(waiter.task)} s`)))
      else if (!claim && Date.now() - waiter.sentAt > leaseMs && (await this.lostJob(waiter.task, leaseMs))) this.finish(id, (w) => w.reject(new Interrupted("its job was taken but never started", true)))
    }
    await this.deps.store.cluster.pruneClaims(Date.now() - CLAIMS_KEPT_MS)
  }

  /** A run whose holder died: closed (so it is pruned like any ended claim; a holder that was
   *  alive after all is told to stop) and interrupted, which queues the task again. */
  private async lose(id: string, claim: ClaimRecord, why: string): Promise<void> {
    await this.deps.store.cluster.saveClaim({ ...claim, status: "failed", error: why, endedAt: new Date().toISOString() })
    await this.deps.link.notify(CANCEL_CHANNEL, JSON.stringify({ id, reason: why })).catch(() => {})
    this.finish(id, (waiter) => waiter.reject(new Interrupted(why, true)))
  }

  /** A job taken (active) for longer than the lease without a claim: its taker died before it
   *  wrote one. A job gone or ended without a claim is lost too. */
  private async lostJob(task: TaskRecord, leaseMs: number): Promise<boolean> {
    const job = await this.deps.boss.getJobById(TASK_QUEUES[task.role as "planner" | "worker"], jobIdOf(task.id, runOf(task)))
    if (!job) return true
    if (job.state === "created" || job.state === "retry") return false
    if (job.state === "active") return job.startedOn !== null && Date.now() - new Date(job.startedOn).getTime() > leaseMs
    // Ended without a claim, though a claim is written before the job completes: re-read it.
    return (await this.deps.store.cluster.claim(claimId(task.id, runOf(task)))) === undefined
  }

  private progress(payload: string): void {
    try {
      const { taskId, summary } = JSON.parse(payload) as { taskId: string; summary: ToolSummary }
      for (const waiter of this.waiting.values()) if (waiter.task.id === taskId) waiter.onTool(summary)
    } catch {
      // Not ours, or cut short: progress is a nicety, never state.
    }
  }

  private finish(id: string, settle: (waiter: Waiter) => void): void {
    const waiter = this.waiting.get(id)
    if (!waiter) return
    this.waiting.delete(id)
    settle(waiter)
  }
}
