import type { webApi } from "@slack/bolt"
import type { Logger } from "pino"
import type { ProgressUpdate } from "../../src/channel/channel.ts"
import type { ToolSummary } from "../../src/store/records.ts"
import type { Place } from "./conversation.ts"
import { escapeMrkdwn } from "./render.ts"

/** Slack allows about one update a second per message before it starts answering 429. */
export const PROGRESS_EDIT_INTERVAL_MS = 1000
/** The status shows the latest tool calls; older ones scroll off. */
const SHOWN_TOOLS = 8
const MAX_LINE = 200

const ICONS: Record<ToolSummary["status"], string> = { running: "…", completed: "✓", error: "✗" }

export function statusText(update: ProgressUpdate): string {
  const lines = update.tools.slice(-SHOWN_TOOLS).map((tool) => `${ICONS[tool.status]} ${escapeMrkdwn((tool.title ?? tool.tool).slice(0, MAX_LINE))}`)
  return [`⚙️ _${escapeMrkdwn(update.agent)} is working_`, ...lines].join("\n")
}

type Status = {
  place: Place
  /** The calls on this message, one after another: post, updates, delete. */
  work: Promise<void>
  ts?: string
  channel?: string
  shown?: string
  latest: string
  lastEditAt: number
  editTimer?: NodeJS.Timeout
}

/**
 * One status message per running task: posted on its first update (in the conversation's
 * thread, if it has one), updated in place as its tool calls change (throttled, the latest
 * text wins), deleted when the task is done. A courtesy: failures are logged, never thrown.
 */
export class ProgressMessages {
  private statuses = new Map<string, Status>()

  constructor(
    private readonly web: webApi.WebClient,
    private readonly log: Logger,
    private readonly editIntervalMs = PROGRESS_EDIT_INTERVAL_MS,
  ) {}

  update(place: Place, update: ProgressUpdate): void {
    const status = this.statuses.get(update.taskId)
    if (update.state === "done") {
      if (status) this.remove(update.taskId, status)
      return
    }
    const text = statusText(update)
    if (status) {
      status.latest = text
      this.scheduleEdit(status)
      return
    }
    const created: Status = { place, work: Promise.resolve(), latest: text, lastEditAt: Date.now() }
    this.statuses.set(update.taskId, created)
    this.queue(created, "post", async () => {
      const posted = await this.web.chat.postMessage({ channel: place.channel, thread_ts: place.thread, text })
      created.ts = posted.ts
      created.channel = posted.channel ?? place.channel
      created.shown = text
    })
  }

  stop(): void {
    for (const status of this.statuses.values()) clearTimeout(status.editTimer)
    this.statuses.clear()
  }

  private scheduleEdit(status: Status): void {
    // An update already scheduled will show status.latest, whatever it is by then.
    if (status.editTimer) return
    const wait = Math.max(0, status.lastEditAt + this.editIntervalMs - Date.now())
    status.editTimer = setTimeout(() => {
      status.editTimer = undefined
      this.queue(status, "update", () => this.edit(status))
    }, wait).unref()
  }

  private async edit(status: Status): Promise<void> {
    const text = status.latest
    if (!status.ts || !status.channel || text === status.shown) return
    await this.web.chat.update({ channel: status.channel, ts: status.ts, text })
    status.shown = text
    status.lastEditAt = Date.now()
  }

  private remove(taskId: string, status: Status): void {
    clearTimeout(status.editTimer)
    this.statuses.delete(taskId)
    this.queue(status, "delete", async () => {
      if (status.ts && status.channel) await this.web.chat.delete({ channel: status.channel, ts: status.ts })
    })
  }

  private queue(status: Status, what: string, call: () => Promise<void>): void {
    status.work = status.work.then(call).catch((error: unknown) => this.log.warn({ err: error, channel: status.place.channel }, `could not ${what} a progress message`))
  }
}
