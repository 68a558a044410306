import type { TaskRecord, TaskStatus, UserId } from "../core/types.ts"
import type { Scheduler } from "../schedule/scheduler.ts"
import type { TriggerSummary } from "../schedule/trigger-table.ts"
import type { Store } from "../store/store.ts"
import type { Caller, ListTasksFilter, TaskSummary } from "../tool/capabilities.ts"
import { DEFAULT_PAGE, MAX_PAGE } from "../tool/list-tasks.ts"
import { shortLocalTime } from "../user/time-zone.ts"

/** list_tasks: the conversation's open tasks (from `live`, what the task board holds) and its
 *  schedules, or a page of its finished tasks (read from the store). */
export async function listTasks(
  from: { live: Iterable<TaskRecord>; store: Store; scheduler: Scheduler; timeZoneOf: (user: UserId) => string },
  caller: Caller,
  filter: ListTasksFilter,
): Promise<TaskSummary[]> {
  // In a conversation several people share, each one's tasks and schedules are their own.
  const own = (item: { user: UserId }) => item.user === caller.user
  if (filter.scope === "finished") {
    const ended = await from.store.finishedTasks(caller.conversation, { limit: Math.min(filter.limit ?? DEFAULT_PAGE, MAX_PAGE), before: filter.before })
    return ended.filter(own).map(taskSummary)
  }
  const statuses: TaskStatus[] = filter.scope === "queue" ? ["queued"] : filter.scope === "running" ? ["running"] : filter.scope === "all" ? ["queued", "running"] : []
  const tasks = [...from.live].filter((task) => task.conversation === caller.conversation && own(task) && statuses.includes(task.status) && (!filter.role || task.role === filter.role)).map(taskSummary)
  const withTriggers = (filter.scope === "triggers" || filter.scope === "all") && !filter.role
  const zone = from.timeZoneOf(caller.user)
  const triggers = withTriggers ? from.scheduler.list(caller.conversation).filter(own).map((trigger) => triggerSummary(trigger, zone)) : []
  return [...tasks, ...triggers]
}

/** A task as list_tasks shows it. */
export function taskSummary(task: TaskRecord): TaskSummary {
  return { id: task.id, type: task.role === "planner" ? "planner" : task.type, prompt: task.prompt.slice(0, 100), priority: task.priority, status: task.status, createdAt: task.createdAt, endedAt: task.endedAt }
}

/** A schedule as list_tasks shows it: its kind, next run (also in the user's zone), last
 *  outcome and whether it is paused. */
export function triggerSummary(trigger: TriggerSummary, zone: string): TaskSummary {
  return {
    id: trigger.id,
    type: `trigger:${trigger.kind}`,
    prompt: trigger.prompt,
    priority: 5,
    status: trigger.status,
    createdAt: trigger.createdAt,
    nextRunAt: trigger.nextRunAt,
    nextRunLocal: trigger.nextRunAt && shortLocalTime(trigger.nextRunAt, zone),
    lastOutcome: trigger.lastOutcome,
    paused: trigger.status === "paused",
  }
}

/** The /tasks listing: open tasks, then schedules, with times in the user's zone. */
export function tasksText(tasks: readonly TaskRecord[], triggers: readonly TriggerSummary[], zone: string): string {
  const short = (text: string) => (text.length > 80 ? `${text.slice(0, 80)}…` : text)
  const taskLines = tasks.map((t) => `• ${t.id} — ${t.status}${t.type === "conditional" ? " (waits for its condition)" : ""}, ${t.agent}: ${short(t.prompt)}`)
  // The first line keeps its machine-readable form (ISO next run); the second says it in the
  // user's own zone.
  const triggerLines = triggers.map((t) => {
    const next = t.status === "paused" ? "paused" : `next ${t.nextRunAt ?? "when its condition holds"}`
    const local = t.status === "paused" ? "  ↳ paused: /resume to run it again" : t.nextRunAt ? `  ↳ next run ${shortLocalTime(t.nextRunAt, zone)}` : undefined
    return [`• ${t.id} — schedule (${t.kind}), ${next}, last ${t.lastOutcome ?? "none yet"}: ${short(t.prompt)}`, ...(local ? [local] : [])].join("\n")
  })
  const lines = [...taskLines, ...triggerLines]
  return lines.length === 0 ? "No tasks are queued or running, and there are no schedules." : lines.join("\n")
}
