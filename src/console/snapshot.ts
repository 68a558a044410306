import type { ChannelHealth } from "../channel/channel.ts"
import type { TaskRecord } from "../core/types.ts"
import { cadence, openTasks, ownerSchedules, ownerUsage, recentFailures, type FiringStatus } from "../owner/queries.ts"
import type { Store } from "../store/store.ts"
import type { UsageSummary } from "../usage/usage.ts"
import type { McpView } from "./mcp-state.ts"

/** What the dashboard reads from the running process besides the store. */
export interface ConsoleSources {
  store: Store
  /** This process's channels and their connection. */
  channels(): Array<{ name: string; health: ChannelHealth }>
  mcp(): McpView[]
  /** The IANA zone times are shown in: the owner's own, else DEFAULT_TIMEZONE. */
  ownerZone(): string
  /** Takes every configured secret out of the state's text, as out of a log line: a task's error
   *  or a channel's reason may quote a URL or a message that holds one. */
  redact?: (text: string) => string
}

const USAGE_DAYS = 14
const FAILURES_SHOWN = 10

export interface TaskView {
  id: string
  agent: string
  user: string
  prompt: string
  /** Seconds since it started (running) or was queued. */
  elapsed: number
}

/** The dashboard's whole state: plain data the page writes out as text, and nothing secret. */
export interface ConsoleSnapshot {
  at: string
  zone: string
  channels: Array<{ name: string; health: "connected" | "down"; reason?: string }>
  running: TaskView[]
  queued: TaskView[]
  failures: Array<TaskView & { status: string; error: string; ended: string }>
  schedules: Array<{ id: string; prompt: string; user: string; state: string; cadence: string; nextRun?: string; last: FiringStatus; lastAt?: string; lastError?: string }>
  usage: Pick<UsageSummary, "perDay" | "byUser" | "byModel">
  mcp: McpView[]
}

/** Reads the dashboard's state: the owner queries the CLI prints, and this process's channels and MCP servers. */
export async function consoleSnapshot(sources: ConsoleSources, now = new Date()): Promise<ConsoleSnapshot> {
  const { store } = sources
  const zone = sources.ownerZone()
  const clock = (iso: string) => clockIn(iso, zone)
  const since = (iso: string | undefined) => Math.max(0, Math.round((now.getTime() - Date.parse(iso ?? now.toISOString())) / 1000))
  const view = (task: TaskRecord, from: string | undefined): TaskView => ({ id: task.id, agent: task.agent, user: task.user, prompt: task.prompt, elapsed: since(from) })
  const open = await openTasks(store)
  const usage = await ownerUsage(store, USAGE_DAYS, now)
  return {
    at: now.toISOString(),
    zone,
    channels: sources.channels().map(({ name, health }) => ({ name, health: health.ok ? "connected" : "down", reason: health.ok ? undefined : health.reason })),
    running: open.filter((task) => task.status === "running").map((task) => view(task, task.startedAt)),
    queued: open.filter((task) => task.status === "queued").map((task) => view(task, task.createdAt)),
    failures: (await recentFailures(store, { limit: FAILURES_SHOWN })).map((task) => ({
      ...view(task, task.startedAt),
      elapsed: task.startedAt && task.endedAt ? Math.round((Date.parse(task.endedAt) - Date.parse(task.startedAt)) / 1000) : 0,
      status: task.status,
      error: task.error ?? "",
      ended: task.endedAt ? clock(task.endedAt) : "",
    })),
    schedules: (await ownerSchedules(store)).map((trigger) => ({
      id: trigger.id,
      prompt: trigger.prompt,
      user: trigger.user,
      state: trigger.status,
      cadence: cadence(trigger, clock),
      nextRun: trigger.status === "active" && trigger.nextRunAt ? clock(trigger.nextRunAt) : undefined,
      last: trigger.lastFiring.status,
      lastAt: trigger.lastFiring.at ? clock(trigger.lastFiring.at) : undefined,
      lastError: trigger.lastFiring.error,
    })),
    usage: { perDay: usage.perDay, byUser: usage.byUser, byModel: usage.byModel },
    mcp: sources.mcp(),
  }
}

/** `Sat 28 Nov, 09:00 Europe/Berlin`: a clock time a person reads, with the zone named. */
export function clockIn(iso: string, zone: string): string {
  const format = new Intl.DateTimeFormat("en-GB", { timeZone: zone, weekday: "short", day: "numeric", month: "short", hour: "2-digit", minute: "2-digit", hourCycle: "h23" })
  return `${format.format(new Date(iso))} ${zone}`
}
