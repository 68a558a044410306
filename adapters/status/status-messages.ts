import { randomUUID } from "node:crypto"
import type { Logger } from "pino"
import type { ChannelState } from "../../src/channel/channel.ts"
import type { Button, ProgressUpdate } from "../../src/core/types.ts"
import { elapsedText } from "./status-text.ts"

/** A message is edited at most this often: elapsed time ticks, tool calls change, and both
 *  Telegram (about 20 edits a minute in a group) and Slack (chat.update, about 50 a minute)
 *  answer 429 to much more. */
export const STATUS_EDIT_INTERVAL_MS = 5000
/** Work that ends sooner shows no status at all: a quick task is answered before it would help. */
export const STATUS_AFTER_MS = 3000

/** What a status message shows: its text and, while the work runs, the button that stops it. */
export interface StatusContent {
  text: string
  stop?: Button
}

/** What a platform does with a status message posted at `Place`, which it refers to by `Ref`. */
export interface StatusPlatform<Place, Ref> {
  /** The status in the platform's markup, with the time the work has run so far. */
  text(update: ProgressUpdate, elapsed: string): string
  post(place: Place, content: StatusContent): Promise<Ref>
  /** Replaces text and button; without `stop` the button is removed. */
  edit(place: Place, ref: Ref, content: StatusContent): Promise<void>
  delete(place: Place, ref: Ref): Promise<void>
  /** Where a failure happened, for the log. */
  describe(place: Place): Record<string, unknown>
  /** What the log calls posting and editing on this platform ("send", "update"). */
  verbs: { post: string; edit: string }
}

export interface StatusTiming {
  editIntervalMs?: number
  showAfterMs?: number
}

type Status<Place, Ref> = {
  place: Place
  update: ProgressUpdate
  /** When the work started (ms since the epoch): elapsed time counts from here. */
  since: number
  /** The calls on this message, one after another: post, edits, the end. */
  work: Promise<void>
  posted: boolean
  ref?: Ref
  /** Where the posted message is remembered in the channel's state. */
  key?: string
  shown?: string
  lastEditAt: number
}

/** Posted status messages in the channel's state: `status/<taskId>/<uuid>`. */
const STATE_PREFIX = "status/"

const sameContent = (content: StatusContent) => JSON.stringify([content.text, content.stop?.id])

/**
 * One status message per batch of work: posted once the work has run `showAfterMs`, edited in
 * place (at most every `editIntervalMs`, the latest text wins) with its elapsed time and tool
 * calls, and, when the work ends, edited a last time to say how — its Stop button removed. One
 * timer serves every status of the channel. Posted messages are remembered in the channel's
 * durable state until they are ended, so those a crash or a stop left behind (their buttons
 * still there) are deleted at the next start. It is a courtesy, so its failures are logged and
 * never reach the core; what a press of a Stop button does is the core's to decide.
 */
export class StatusMessages<Place, Ref> {
  private readonly statuses = new Map<string, Status<Place, Ref>>()
  private readonly editIntervalMs: number
  private readonly showAfterMs: number
  private ticker?: NodeJS.Timeout
  private state?: ChannelState

  constructor(
    private readonly platform: StatusPlatform<Place, Ref>,
    private readonly log: Logger,
    timing: StatusTiming = {},
  ) {
    this.editIntervalMs = timing.editIntervalMs ?? STATUS_EDIT_INTERVAL_MS
    this.showAfterMs = timing.showAfterMs ?? STATUS_AFTER_MS
  }

  update(place: Place, update: ProgressUpdate): void {
    const status = this.statuses.get(update.taskId)
    if (update.state === "done") {
      if (status) this.end(status, update)
      return
    }
    if (status) status.update = update
    const current = status ?? { place, update, since: Date.parse(update.startedAt ?? "") || Date.now(), work: Promise.resolve(), posted: false, lastEditAt: 0 }
    this.statuses.set(update.taskId, current)
    this.visit(current, Date.now())
    this.ticker ??= setInterval(() => this.tick(), Math.max(10, Math.min(1000, this.editIntervalMs, this.showAfterMs || 1000))).unref()
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
    clearInterval(this.ticker)
    this.ticker = undefined
    this.statuses.clear()
  }

  private tick(): void {
    const now = Date.now()
    for (const status of this.statuses.values()) this.visit(status, now)
  }

  /** Posts a status whose work has run long enough, or edits one whose text changed and whose
   *  last edit is long enough ago. */
  private visit(status: Status<Place, Ref>, now: number): void {
    if (!status.posted) {
      if (now - status.since >= this.showAfterMs) this.post(status, now)
      return
    }
    if (now - status.lastEditAt < this.editIntervalMs || sameContent(this.contentOf(status, now)) === status.shown) return
    status.lastEditAt = now
    this.queue(status, this.platform.verbs.edit, async () => {
      const content = this.contentOf(status, Date.now())
      if (status.ref === undefined || sameContent(content) === status.shown) return
      await this.platform.edit(status.place, status.ref, content)
      status.shown = sameContent(content)
    })
  }

  private post(status: Status<Place, Ref>, now: number): void {
    status.posted = true
    status.lastEditAt = now
    this.queue(status, this.platform.verbs.post, async () => {
      const content = this.contentOf(status, Date.now())
      status.ref = await this.platform.post(status.place, content)
      status.shown = sameContent(content)
      if (!this.state) return
      // A key of its own: a batch shown again after a restart posts anew while the old one is cleared.
      status.key = `${STATE_PREFIX}${status.update.taskId}/${randomUUID()}`
      await this.state.set(status.key, { place: status.place, ref: status.ref })
    })
  }

  /** The work ended: a status never shown stays unshown; a shown one says how it ended, without
   *  its button, and leaves the record of what to tidy. */
  private end(status: Status<Place, Ref>, update: ProgressUpdate): void {
    this.statuses.delete(update.taskId)
    if (this.statuses.size === 0) {
      clearInterval(this.ticker)
      this.ticker = undefined
    }
    if (!status.posted) return
    status.update = update
    this.queue(status, this.platform.verbs.edit, async () => {
      if (status.ref === undefined) return
      await this.platform.edit(status.place, status.ref, this.contentOf(status, Date.now()))
      if (status.key) await this.state?.delete(status.key)
    })
  }

  private contentOf(status: Status<Place, Ref>, now: number): StatusContent {
    const text = this.platform.text(status.update, elapsedText(now - status.since))
    return status.update.state === "running" && status.update.stop ? { text, stop: status.update.stop } : { text }
  }

  private queue(status: Status<Place, Ref>, what: string, call: () => Promise<void>): void {
    status.work = status.work.then(call).catch((error: unknown) => this.log.warn({ err: error, ...this.platform.describe(status.place) }, `could not ${what} a progress message`))
  }
}
