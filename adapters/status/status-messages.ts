import { randomUUID } from "node:crypto"
import type { Logger } from "pino"
import type { ChannelState } from "../../src/channel/channel.ts"
import type { ProgressUpdate, ToolSummary } from "../../src/core/types.ts"

/** Slack and Telegram both answer 429 to a message edited much faster than about once a second. */
export const STATUS_EDIT_INTERVAL_MS = 1000
/** The status shows the latest tool calls; older ones scroll off. */
const SHOWN_TOOLS = 8
const MAX_TITLE = 200

const ICONS: Record<ToolSummary["status"], string> = { running: "…", completed: "✓", error: "✗" }

/** One line per recent tool call, its title passed through `escape` for the platform's markup. */
export const toolLines = (update: ProgressUpdate, escape: (text: string) => string = (text) => text) =>
  update.tools.slice(-SHOWN_TOOLS).map((tool) => `${ICONS[tool.status]} ${escape((tool.title ?? tool.tool).slice(0, MAX_TITLE))}`)

/** What a platform does with a status message posted at `Place`, which it refers to by `Ref`. */
export interface StatusPlatform<Place, Ref> {
  text(update: ProgressUpdate): string
  post(place: Place, text: string): Promise<Ref>
  edit(place: Place, ref: Ref, text: string): Promise<void>
  delete(place: Place, ref: Ref): Promise<void>
  /** Where a failure happened, for the log. */
  describe(place: Place): Record<string, unknown>
  /** What the log calls posting and editing on this platform ("send", "update"). */
  verbs: { post: string; edit: string }
}

type Status<Place, Ref> = {
  place: Place
  /** The calls on this message, one after another: post, edits, delete. */
  work: Promise<void>
  ref?: Ref
  /** Where the posted message is remembered in the channel's state. */
  key?: string
  shown?: string
  latest: string
  lastEditAt: number
  editTimer?: NodeJS.Timeout
}

/** Posted status messages in the channel's state: `status/<taskId>/<uuid>`. */
const STATE_PREFIX = "status/"

/**
 * One status message per running task: posted on its first update, edited in place as its tool
 * calls change (throttled, the latest text wins), deleted when the task is done. Posted messages
 * are remembered in the channel's durable state, so those a crash or a stop left behind are
 * deleted at the next start. It is a courtesy, so its failures are logged and never reach the core.
 */
export class StatusMessages<Place, Ref> {
  private readonly statuses = new Map<string, Status<Place, Ref>>()
  private state?: ChannelState

  constructor(
    private readonly platform: StatusPlatform<Place, Ref>,
    private readonly log: Logger,
    private readonly editIntervalMs = STATUS_EDIT_INTERVAL_MS,
  ) {}

  update(place: Place, update: ProgressUpdate): void {
    const status = this.statuses.get(update.taskId)
    if (update.state === "done") {
      if (status) this.remove(update.taskId, status)
      return
    }
    const text = this.platform.text(update)
    if (status) {
      status.latest = text
      this.scheduleEdit(status)
      return
    }
    const created: Status<Place, Ref> = { place, work: Promise.resolve(), latest: text, lastEditAt: Date.now() }
    this.statuses.set(update.taskId, created)
    this.queue(created, this.platform.verbs.post, async () => {
      created.ref = await this.platform.post(place, text)
      created.shown = text
      if (!this.state) return
      // A key of its own: a task resumed after a restart posts anew while the old one is cleared.
      created.key = `${STATE_PREFIX}${update.taskId}/${randomUUID()}`
      await this.state.set(created.key, { place, ref: created.ref })
    })
  }

  /** Uses `state` from now on, and (unless `tidy` is false) deletes the status messages an
   *  earlier run left behind. */
  async restore(state: ChannelState | undefined, tidy = true): Promise<void> {
    this.state = state
    if (tidy) await this.tidy()
  }

  /** Deletes the status messages on record: those an earlier run left behind. */
  async tidy(): Promise<void> {
    for (const { key, value } of (await this.state?.list<{ place: Place; ref: Ref }>(STATE_PREFIX)) ?? []) {
      await this.platform.delete(value.place, value.ref).catch((error: unknown) => this.log.warn({ err: error, ...this.platform.describe(value.place) }, "could not delete a status message left from before"))
      await this.state!.delete(key)
    }
  }

  stop(): void {
    for (const status of this.statuses.values()) clearTimeout(status.editTimer)
    this.statuses.clear()
  }

  private scheduleEdit(status: Status<Place, Ref>): void {
    // An edit already scheduled will show status.latest, whatever it is by then.
    if (status.editTimer) return
    const wait = Math.max(0, status.lastEditAt + this.editIntervalMs - Date.now())
    status.editTimer = setTimeout(() => {
      status.editTimer = undefined
      this.queue(status, this.platform.verbs.edit, () => this.edit(status))
    }, wait).unref()
  }

  private async edit(status: Status<Place, Ref>): Promise<void> {
    const text = status.latest
    if (status.ref === undefined || text === status.shown) return
    await this.platform.edit(status.place, status.ref, text)
    status.shown = text
    status.lastEditAt = Date.now()
  }

  private remove(taskId: string, status: Status<Place, Ref>): void {
    clearTimeout(status.editTimer)
    this.statuses.delete(taskId)
    this.queue(status, "delete", async () => {
      if (status.ref !== undefined) await this.platform.delete(status.place, status.ref)
      if (status.key) await this.state?.delete(status.key)
    })
  }

  private queue(status: Status<Place, Ref>, what: string, call: () => Promise<void>): void {
    status.work = status.work.then(call).catch((error: unknown) => this.log.warn({ err: error, ...this.platform.describe(status.place) }, `could not ${what} a progress message`))
  }
}
