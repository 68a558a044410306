import { hostname } from "node:os"
import type { Logger } from "pino"
import type { TaskRecord } from "../core/types.ts"
import type { ClusterRecords } from "../store/cluster-records.ts"
import type { ProcessRecord } from "../store/records.ts"
import type PgBoss from "pg-boss"
import type { Config } from "../config/config.ts"
import type { Store } from "../store/store.ts"
import type { ClusterLink } from "./link.ts"

/** What the parts of a cluster node share: the store, the job queue, the link and this process. */
export interface NodeParts {
  store: Store
  boss: PgBoss
  link: ClusterLink
  membership: Membership
  config: Config
  log: Logger
}

/** A dead process's record stays this many leases, for `steward status`, then goes. */
const DEAD_KEPT_LEASES = 40

/**
 * This process in the cluster: its record (who it is, whether it leads, what it runs), rewritten
 * every fifth of a lease as its heartbeat, and the leader lock it tries to take at each beat until
 * it holds it. A process is taken for dead — what it ran is run again elsewhere (remote-runs.ts) —
 * the moment its connections to Postgres are gone (it holds a lock of its own on one: a killed
 * process loses it at once; its store's are tagged, and one in the middle of a write stays until
 * the write has landed — see ClusterLink.connected), or when it has not beaten for the lease
 * (hung with the connection open). A slow beat alone does not make a live process dead before
 * the lease is out.
 */
export class Membership {
  private leading = false
  private readonly startedAt = new Date().toISOString()
  private readonly running = new Map<string, ProcessRecord["running"][number]>()
  private timer: NodeJS.Timeout | undefined
  private beating: Promise<void> = Promise.resolve()
  /** Per process, its last beat seen and when it was first seen here (see alive). */
  private readonly beats = new Map<string, { seenAt: string; at: number }>()

  constructor(
    private readonly deps: {
      /** This process's id (newMemberId); its store's connections carry its tag. */
      id: string
      records: ClusterRecords
      link: ClusterLink
      leaseMs: number
      log: Logger
      /** This process just took the leader lock (called once; the heartbeat goes on beside it). */
      onLeader: () => void
      /** This process led and no longer holds the lock. */
      onLost: (error: Error) => void
    },
  ) {}

  get id(): string {
    return this.deps.id
  }

  get isLeader(): boolean {
    return this.leading
  }

  /** Writes the first heartbeat and tries to lead; then beats on. */
  async start(): Promise<void> {
    await this.deps.link.holdProcessLock(this.id)
    await this.beat()
    this.timer = setInterval(() => void this.beat(), Math.max(50, Math.floor(this.deps.leaseMs / 5)))
    this.timer.unref()
  }

  /** A run starts here: on record before it starts, so a death during it is seen. */
  async started(task: TaskRecord, run: number): Promise<void> {
    this.running.set(`${task.id}:${run}`, { taskId: task.id, run, agent: task.agent, conversation: task.conversation })
    await this.write()
  }

  async ended(taskId: string, run: number): Promise<void> {
    this.running.delete(`${taskId}:${run}`)
    await this.write()
  }

  /** The ids of the processes connected and seen within the lease (this one always). */
  async alive(): Promise<Set<string>> {
    const beating = (await this.silences()).filter(({ silent }) => silent < this.deps.leaseMs).map(({ id }) => id)
    const connected = await this.deps.link.connected(beating)
    return new Set([this.id, ...beating.filter((id) => connected.has(id))])
  }

  /** Every process on record and how long its beat has not changed. A beat is judged by when
   *  this process saw it change, on its own clock: another machine's clock may be off by more
   *  than a lease. */
  private async silences(): Promise<Array<{ id: string; silent: number }>> {
    const now = Date.now()
    const records = await this.deps.records.processes()
    for (const id of this.beats.keys()) if (!records.some((record) => record.id === id)) this.beats.delete(id)
    return records.map((record) => {
      const seen = this.beats.get(record.id)
      if (seen?.seenAt === record.seenAt) return { id: record.id, silent: now - seen.at }
      this.beats.set(record.id, { seenAt: record.seenAt, at: now })
      return { id: record.id, silent: 0 }
    })
  }

  /** Leaves the cluster: the record goes (the leader lock goes with the link). */
  async stop(): Promise<void> {
    clearInterval(this.timer)
    await this.beating
    await this.deps.records.removeProcess(this.id).catch((error: unknown) => this.deps.log.warn({ err: error }, "cluster: could not remove this process's record"))
  }

  private beat(): Promise<void> {
    this.beating = this.beating.then(async () => {
      try {
        if (!this.leading && (await this.deps.link.tryLead())) {
          // Leading starts with the lock, whatever becomes of the record's write below.
          this.leading = true
          this.deps.log.info({ process: this.id }, "cluster: this process leads")
          this.deps.onLeader()
        } else if (this.leading && !(await this.deps.link.holdsLead())) {
          // The connection was replaced under it (dropped by something in between): another
          // process may lead by now, so this one must stop at once.
          this.deps.onLost(new Error("the leader lock is no longer held"))
          return
        }
        await this.write()
        if (this.leading) await this.forgetDead()
      } catch (error) {
        this.deps.log.warn({ err: error }, "cluster: heartbeat failed")
      }
    })
    return this.beating
  }

  private write(): Promise<void> {
    const record: ProcessRecord = { id: this.id, host: hostname(), pid: process.pid, startedAt: this.startedAt, seenAt: new Date().toISOString(), leader: this.leading, running: [...this.running.values()] }
    return this.deps.records.saveProcess(record)
  }

  private async forgetDead(): Promise<void> {
    const silent = (await this.silences()).filter(({ silent }) => silent >= DEAD_KEPT_LEASES * this.deps.leaseMs).map(({ id }) => id)
    if (silent.length === 0) return
    const connected = await this.deps.link.connected(silent)
    for (const id of silent) if (!connected.has(id)) await this.deps.records.removeProcess(id)
  }
}
