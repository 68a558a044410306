import type { Backend } from "./backend.ts"
import { claims, processes, put, remove } from "./collections.ts"
import type { ClaimRecord, ProcessRecord } from "./records.ts"

/**
 * What the processes of a cluster (STORE_URL on Postgres, src/cluster) keep in the store beside
 * the Supervisor's records: who is alive and what each runs, and the claim of every task run.
 */

export const claimId = (taskId: string, run: number): string => `${taskId}:${run}`

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
