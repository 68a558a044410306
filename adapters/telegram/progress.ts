import type { Api } from "grammy"
import type { Logger } from "pino"
import type { ProgressUpdate } from "../../src/channel/channel.ts"
import type { ToolSummary } from "../../src/store/records.ts"
import { isNotModified } from "./messages.ts"

/** Telegram answers 429 to a chat's messages edited much faster than about once a second. */
const PROGRESS_EDIT_INTERVAL_MS = 1000
/** The status shows the latest tool calls; older ones scroll off. */
const SHOWN_TOOLS = 8
const MAX_LINE = 200

const ICONS: Record<ToolSummary["status"], string> = { running: "…", completed: "✓", error: "✗" }

/** A task's status message as plain text, so no tool title can break its markup. */
function statusText(update: ProgressUpdate): string {
  const lines = update.tools.slice(-SHOWN_TOOLS).map((tool) => `${ICONS[tool.status]} ${tool.title ?? tool.tool}`.slice(0, MAX_LINE))
  return [`⚙️ ${update.agent} is working`, ...lines].join("\n")
}

type Status = {
  chatId: number
  /** The calls on this message, one after another: send, edits, delete. */
  work: Promise<void>
  messageId?: number
  shown?: string
  latest: string
  lastEditAt: number
  editTimer?: NodeJS.Timeout
}

/**
 * One status message per running task: sent on its first update, edited in place as its tool
 * calls change (throttled, the latest text wins), deleted when the task is done. It is a
 * courtesy, so its failures are logged and never reach the core.
 */
export class ProgressMessages {
  private readonly statuses = new Map<string, Status>()

  constructor(
    private readonly api: Api,
    private readonly log: Logger,
    private readonly editIntervalMs = PROGRESS_EDIT_INTERVAL_MS,
  ) {}

  update(chatId: number, update: ProgressUpdate): void {
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
    const created: Status = { chatId, work: Promise.resolve(), latest: text, lastEditAt: Date.now() }
    this.statuses.set(update.taskId, created)
    this.queue(created, "send", async () => {
      created.messageId = (await this.api.sendMessage(chatId, text)).message_id
      created.shown = text
    })
  }

  stop(): void {
    for (const status of this.statuses.values()) clearTimeout(status.editTimer)
    this.statuses.clear()
  }

  private scheduleEdit(status: Status): void {
    // An edit already scheduled will show status.latest, whatever it is by then.
    if (status.editTimer) return
    const wait = Math.max(0, status.lastEditAt + this.editIntervalMs - Date.now())
    status.editTimer = setTimeout(() => {
      status.editTimer = undefined
      this.queue(status, "edit", () => this.edit(status))
    }, wait).unref()
  }

  private async edit(status: Status): Promise<void> {
    const text = status.latest
    if (status.messageId === undefined || text === status.shown) return
    await this.api.editMessageText(status.chatId, status.messageId, text).catch((error: unknown) => {
      if (!isNotModified(error)) throw error
    })
    status.shown = text
    status.lastEditAt = Date.now()
  }

  private remove(taskId: string, status: Status): void {
    clearTimeout(status.editTimer)
    this.statuses.delete(taskId)
    this.queue(status, "delete", async () => {
      if (status.messageId !== undefined) await this.api.deleteMessage(status.chatId, status.messageId)
    })
  }

  private queue(status: Status, what: string, call: () => Promise<void>): void {
    status.work = status.work.then(call).catch((error: unknown) => this.log.warn({ err: error, chatId: status.chatId }, `could not ${what} a progress message`))
  }
}
