import { createHash } from "node:crypto"
import PgBoss from "pg-boss"
import type { Logger } from "pino"
import type { TaskRecord } from "../core/types.ts"
import { runOf } from "../supervisor/task-records.ts"

/** pg-boss queues: one per task role, and the calls followers make to the leader. */
export const TASK_QUEUES = { planner: "steward-planner", worker: "steward-worker" } as const
export const CALL_QUEUE = "steward-calls"
/** Calls that wait for a user (an approval, a question), apart: a slot each for minutes must not
 *  hold up the calls that answer them (a button press taken in by another process). */
export const WAIT_QUEUE = "steward-calls-waiting"
const MAX_EXPIRE_SECONDS = 24 * 3600 - 1

/** What a task's job carries: the run it is (TaskRecord.runs; the task record is read from the store). */
export interface TaskJob {
  taskId: string
  run: number
}

/** A job id a task's run always has, so dispatching it again (a new leader taking over) adds
 *  nothing: pg-boss inserts a job whose id exists as no job at all. */
export function jobIdOf(taskId: string, run: number): string {
  const hex = createHash("sha1").update(`steward-task:${taskId}:${run}`).digest("hex")
  // The layout of a UUID (version 5, variant 1): pg-boss keeps job ids as uuid.
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${((parseInt(hex[16]!, 16) & 3) | 8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`
}

/** Starts pg-boss on the cluster's database (its own schema, `pgboss`), creating the queues. Its
 *  maintenance — failing jobs whose holder went silent past their expiry — runs every lease. */
export async function startBoss(url: string, leaseSeconds: number, log: Logger): Promise<PgBoss> {
  const boss = new PgBoss({ connectionString: url, max: 4, application_name: "steward-queue", schedule: false, supervise: true, maintenanceIntervalSeconds: Math.max(1, leaseSeconds) })
  boss.on("error", (error) => log.warn({ err: error }, "cluster: job queue error"))
  await boss.start()
  for (const name of [...Object.values(TASK_QUEUES), CALL_QUEUE, WAIT_QUEUE]) await createQueueOnce(boss, name)
  return boss
}

/** Several processes starting at once may all create a queue: one wins, the others find it there.
 *  Creating one is DDL on pg-boss's job table, so two at once can also end in a deadlock that
 *  Postgres breaks by failing one (before the other has committed): that one tries again. */
async function createQueueOnce(boss: PgBoss, name: string, attempts = 5): Promise<void> {
  for (let attempt = 1; !(await boss.getQueue(name)); attempt++) {
    try {
      await boss.createQueue(name)
    } catch (error) {
      if (attempt >= attempts) throw error
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt + Math.random() * 50))
    }
  }
}

/** Puts a task's run (written as running by the leader) on its role's queue; idempotent. */
export async function dispatchTask(boss: PgBoss, task: TaskRecord, timeoutSeconds: number, leaseSeconds: number): Promise<void> {
  await boss.send(TASK_QUEUES[task.role as "planner" | "worker"], { taskId: task.id, run: runOf(task) } satisfies TaskJob, {
    id: jobIdOf(task.id, runOf(task)),
    // pg-boss fetches higher priorities first, as the task queue does (0-10).
    priority: task.priority,
    // A lost run is retried by the leader as a new attempt (a new job), never by pg-boss.
    retryLimit: 0,
    // pg-boss refuses 24 h or more; the leader follows the claim, not the job's expiry.
    expireInSeconds: Math.min(MAX_EXPIRE_SECONDS, Math.max(1, Math.ceil(timeoutSeconds + leaseSeconds))),
  })
}

/**
 * Takes jobs of one queue while fewer than `concurrency` are in hand: at once when woken (a
 * notification that work was queued, or a job of ours ending), and every `pollMs` in case a
 * notification was missed. Each job is handed to `handle`, which completes it.
 */
export class Claimer<T extends object> {
  private active = 0
  private fetching = false
  private again = false
  private stopped = false
  private timer: NodeJS.Timeout | undefined
  private readonly inflight = new Set<Promise<void>>()
  private filling: Promise<void> = Promise.resolve()

  constructor(
    private readonly boss: PgBoss,
    private readonly queue: string,
    private readonly concurrency: number,
    private readonly handle: (job: PgBoss.Job<T>) => Promise<void>,
    private readonly log: Logger,
    private readonly pollMs = 1000,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.wake(), this.pollMs)
    this.timer.unref()
    this.wake()
  }

  wake(): void {
    if (this.stopped) return
    if (this.fetching) {
      this.again = true
      return
    }
    this.filling = this.fill()
  }

  /** Takes nothing more; the jobs in hand go on. */
  pause(): void {
    this.stopped = true
    clearInterval(this.timer)
  }

  /** Resolves once no job is in hand (after `pause`, once those in hand ended). */
  async drained(): Promise<void> {
    await this.filling
    await Promise.allSettled(this.inflight)
  }

  /** Takes nothing more; waits for a fetch under way (its jobs are handed over like any) and
   *  the jobs in hand. */
  async stop(): Promise<void> {
    this.pause()
    await this.drained()
  }

  private async fill(): Promise<void> {
    this.fetching = true
    try {
      while (!this.stopped && this.active < this.concurrency) {
        const jobs = await this.boss.fetch<T>(this.queue, { batchSize: this.concurrency - this.active, priority: true })
        if (jobs.length === 0) break
        for (const job of jobs) this.run(job)
      }
    } catch (error) {
      this.log.warn({ err: error, queue: this.queue }, "cluster: could not fetch jobs")
    } finally {
      this.fetching = false
      if (this.again) {
        this.again = false
        this.wake()
      }
    }
  }

  private run(job: PgBoss.Job<T>): void {
    this.active++
    const done = this.handle(job)
      .catch((error: unknown) => this.log.error({ err: error, queue: this.queue, job: job.id }, "cluster: a job's handler failed"))
      .finally(() => {
        this.active--
        this.inflight.delete(done)
        this.wake()
      })
    this.inflight.add(done)
  }
}
