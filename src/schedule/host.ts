import type { FiringRecord, TaskStatus, TriggerRecord } from "../core/types.ts"

/** What the scheduler asks of the runtime (the Supervisor). */
export interface SchedulerHost {
  /** Creates and queues (durably) the Worker task of a firing, with the trigger's prompt and
   *  timeout; returns its id. Called again for the same firing after a crash, so it must be
   *  idempotent by firing id (e.g. origin `firing:<id>`). Must not wait for a Scheduler call. */
  startRun(trigger: TriggerRecord, firing: FiringRecord): Promise<string>
  taskStatus(taskId: string): TaskStatus | undefined
  /** Something the trigger's owner must hear that no run will report: a missed due time that
   *  was skipped, a run that could not be started, a trigger whose condition can no longer
   *  hold. Called once it is recorded; must not wait for a Scheduler call either. */
  notify(trigger: TriggerRecord, text: string): Promise<void>
}
