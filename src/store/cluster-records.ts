import type { Backend } from "./backend.ts"
import { claims, processes, put, remove } from "./collections.ts"

/**
 * What the processes of a cluster (STORE_URL on Postgres, src/cluster) keep in the store beside
 * the Supervisor's records: who is alive and what each runs, and the claim of every task run.
 */

/** One run of a task (one attempt) in the process that claimed it. The claimer writes it before
 *  the run starts and again with its end; the leader reads the end from it. */
export interface ClaimRecord {
  /** `<taskId>:<attempt>` */
  id: string
  taskId: string
  attempt: number
  /** The process id (ProcessRecord.id) running it. */
  holder: string
  startedAt: string
  /** released: the holder stopped in order before the run ended (the attempt does not count). */
  status: "running" | "done" | "failed" | "released"
  endedAt?: string
  /** done: the run's last text. */
  result?: string
  /** failed: why. */
  error?: string
  /** failed: the run took longer than its task's timeout. */
  timedOut?: boolean
}

/** A Steward process of the cluster, rewritten at every heartbeat. */
export interface ProcessRecord {
  id: string
  host: string
  pid: number
  startedAt: string
  /** The last heartbeat: a process not seen for the lease is dead, its claims are taken back. */
  seenAt: string
  leader: boolean
  running: Array<{ taskId: string; attempt: number; agent: string; conversation: string }>
}

export const claimId = (taskId: string, attempt: number): string => `${taskId}:${attempt}`

export class ClusterRecords {
  constructor(private readonly backend: Backend) {}

  async claim(id: string): Promise<ClaimRecord | undefined> {
    return (await this.backend.get(claims.name, id)) as ClaimRecord | undefined
  }
  saveClaim(claim: ClaimRecord): Promise<void> {
    return this.backend.write([put(claims, claim)])
  }
  /** Drops the claims of runs that ended before `before` (ms): their task records hold the outcome. */
  async pruneClaims(before: number): Promise<number> {
    const old = (await this.backend.list(claims.name, { index: "ended", group: "", to: before, limit: 1000 })) as ClaimRecord[]
    if (old.length > 0) await this.backend.write(old.map((claim) => remove(claims, claim.id)))
    return old.length
  }
  async processes(): Promise<ProcessRecord[]> {
    return (await this.backend.page(processes.name, { limit: 1000 })).map((row) => row.value as ProcessRecord)
  }
  saveProcess(record: ProcessRecord): Promise<void> {
    return this.backend.write([put(processes, record)])
  }
  removeProcess(id: string): Promise<void> {
    return this.backend.write([remove(processes, id)])
  }
}
