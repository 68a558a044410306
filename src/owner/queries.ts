import { TERMINAL, type FiringRecord, type TaskRecord, type TriggerRecord } from "../core/types.ts"
import type { ErrorRecord } from "../store/records.ts"
import type { Store } from "../store/store.ts"
import { summariseUsage, type UsageSummary } from "../usage/usage.ts"

/**
 * The owner's reads of the store: one layer that the CLI (`steward status/tasks/task/triggers/
 * usage`) and the browser console both print from, so a view of the same thing cannot drift
 * between them. Each function reads; none changes anything (changes go through the owner
 * controls, src/control/).
 */

const DAY_MS = 86_400_000

export interface QueueCounts {
  queued: number
  running: number
}

export interface StatusReport {
  queues: Record<string, QueueCounts>
  activeTriggers: number
  pausedTriggers: number
  nextTriggers: Array<{ id: string; nextRunAt: string; prompt: string }>
  outboxBacklog: number
  pendingControls: number
  lastErrors: ErrorRecord[]
  processes: ProcessView[]
}

export interface ProcessView {
  id: string
  leader: boolean
  seenAt: string
  alive: boolean
  running: Array<{ taskId: string; agent: string }>
}

/** What `steward status` reports of the store: queues, schedules, outbox, controls, errors and
 *  (in a cluster) the processes. */
export async function ownerStatus(store: Store, options: { leaseMs: number; nextTriggers: number; lastErrors: number }): Promise<StatusReport> {
  const queues: Record<string, QueueCounts> = { planner: { queued: 0, running: 0 }, worker: { queued: 0, running: 0 } }
  for (const task of await openTasks(store)) {
    const queue = (queues[task.role] ??= { queued: 0, running: 0 })
    if (task.status === "queued") queue.queued++
    else queue.running++
  }
  const triggers = await ownerTriggers(store, { all: false })
  const nextTriggers = triggers
    .filter((t) => t.status === "active" && t.nextRunAt)
    .sort((a, b) => Date.parse(a.nextRunAt!) - Date.parse(b.nextRunAt!))
    .slice(0, options.nextTriggers)
    .map((t) => ({ id: t.id, nextRunAt: t.nextRunAt!, prompt: t.prompt }))
  return {
    queues,
    activeTriggers: triggers.filter((t) => t.status === "active").length,
    pausedTriggers: triggers.filter((t) => t.status === "paused").length,
    nextTriggers,
    outboxBacklog: (await store.outbox.unsent()).length,
    pendingControls: (await store.owner.pendingControls()).length,
    lastErrors: await store.owner.recentErrors(options.lastErrors),
    processes: await clusterProcesses(store, options.leaseMs),
  }
}

/** The processes of a cluster (STORE_URL on Postgres), leader first; none for one process on
 *  SQLite. A process not seen for the lease is dead (its tasks are run again elsewhere). */
async function clusterProcesses(store: Store, leaseMs: number): Promise<ProcessView[]> {
  const cutoff = Date.now() - leaseMs
  return (await store.cluster.processes())
    .map((record) => ({ ...record, alive: Date.parse(record.seenAt) >= cutoff }))
    .sort((a, b) => Number(b.leader && b.alive) - Number(a.leader && a.alive) || a.id.localeCompare(b.id))
}

/** Tasks queued or running, oldest first. */
export async function openTasks(store: Store): Promise<TaskRecord[]> {
  return (await store.liveTasks()).filter((task) => !TERMINAL.has(task.status))
}

/** `steward tasks`: the open tasks, or with `all` every task ever recorded; `user` narrows to one user's. */
export async function ownerTasks(store: Store, options: { all?: boolean; user?: string }): Promise<TaskRecord[]> {
  const tasks = options.all ? await store.tasks() : await openTasks(store)
  return tasks.filter((task) => !options.user || task.user === options.user)
}

export interface TaskTree {
  task: TaskRecord
  children: TaskTree[]
}

/** `steward task <id>`: a task and the tasks it committed, and theirs. */
export async function ownerTaskTree(store: Store, resolveId: (ids: string[]) => string): Promise<TaskTree | undefined> {
  const all = await store.tasks()
  const task = all.find((t) => t.id === resolveId(all.map((t) => t.id)))
  return task && treeOf(task, all)
}

function treeOf(task: TaskRecord, all: TaskRecord[], seen = new Set<string>()): TaskTree {
  seen.add(task.id)
  const children = all.filter((t) => (t.parentTaskId === task.id || task.children?.includes(t.id)) && !seen.has(t.id))
  return { task, children: children.map((child) => treeOf(child, all, seen)) }
}

/** Tasks that failed or timed out, newest first: the latest `perConversation` ended tasks of
 *  each conversation are looked at (an index read each), so the cost does not grow with history. */
export async function recentFailures(store: Store, options: { limit: number; perConversation?: number }): Promise<TaskRecord[]> {
  const failed: TaskRecord[] = []
  for (const conversation of await store.conversations()) {
    for (const task of await store.finishedTasks(conversation.id, { limit: options.perConversation ?? 20 })) {
      if (task.status === "failed" || task.status === "timed_out") failed.push(task)
    }
  }
  return failed.sort((a, b) => (b.endedAt ?? "").localeCompare(a.endedAt ?? "")).slice(0, options.limit)
}

/** `steward triggers`: active and paused schedules, or with `all` every one ever created. */
export async function ownerTriggers(store: Store, options: { all?: boolean }): Promise<TriggerRecord[]> {
  const triggers = options.all ? await store.schedules.triggers() : await store.schedules.liveTriggers()
  return triggers.filter((t) => options.all || t.status === "active" || t.status === "paused")
}

/** When a schedule runs, in a few words; `at` writes a time. */
export function cadence(trigger: TriggerRecord, at: (iso: string) => string): string {
  if (trigger.cron) return `cron ${trigger.cron}${trigger.timezone ? ` ${trigger.timezone}` : ""}`
  if (trigger.interval) return `every ${trigger.interval} s`
  if (trigger.runAt) return `at ${at(trigger.runAt)}`
  return `when ${JSON.stringify(trigger.condition)}`
}

/** How a schedule's latest firing went, in the owner's words: `delivered` (its report arrived),
 *  `quiet` (it ran and had nothing to report), `failed`, `missed` (its time passed while
 *  Steward was down, or a run was still going), `running`, `ran` (its run ended and no report
 *  has been delivered yet), or `none` yet. */
export type FiringStatus = "delivered" | "quiet" | "failed" | "missed" | "running" | "ran" | "none"

export interface LastFiring {
  status: FiringStatus
  at?: string
  error?: string
}

export function firingStatus(firing: FiringRecord | undefined): LastFiring {
  if (!firing) return { status: "none" }
  const at = firing.scheduledFor
  if (firing.outcome !== "fired" && firing.outcome !== "missed_run") return { status: "missed", at }
  if (firing.status === "failed") return { status: "failed", at, error: firing.error }
  if (firing.nothingToReport) return { status: "quiet", at }
  if (firing.status === "delivered") return { status: "delivered", at }
  if (firing.status === "ran") return { status: "ran", at }
  return { status: "running", at }
}

/** Each schedule with how its latest firing went. */
export async function ownerSchedules(store: Store): Promise<Array<TriggerRecord & { lastFiring: LastFiring }>> {
  const triggers = await ownerTriggers(store, { all: false })
  return Promise.all(triggers.map(async (trigger) => ({ ...trigger, lastFiring: firingStatus(trigger.lastFiringId ? await store.schedules.firing(trigger.lastFiringId) : undefined) })))
}

/** `steward usage`: model tokens over the last `days` days, per day and role, user and model. */
export async function ownerUsage(store: Store, days: number, now = new Date()): Promise<UsageSummary> {
  return summariseUsage(await store.owner.usageSince(now.getTime() - days * DAY_MS), { days, now })
}
