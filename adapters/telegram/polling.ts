import type { Bot } from "grammy"
import type { Update } from "grammy/types"
import type { Logger } from "pino"

/** Seconds a getUpdates call waits for updates (long polling). */
const POLL_SECONDS = 30
const FIRST_RETRY_MS = 500
const MAX_RETRY_MS = 30_000

/**
 * Long polling that confirms to Telegram only what the core has stored. Telegram forgets the
 * updates below the `offset` of the next getUpdates call, so the offset moves past a batch only
 * once every update of it was handed over; when one could not be stored, the next poll starts
 * at it (after a pause) and Telegram delivers it again — with those after it, which the core
 * recognises by their update ids. (The runner of @grammyjs/runner confirms a batch as soon as
 * it has fetched it.) The updates of one batch are handled at once, each chat's in order
 * (the bot's sequentialize middleware).
 */
export class UpdatePoller {
  private readonly controller = new AbortController()
  private loop?: Promise<void>

  constructor(
    private readonly bot: Bot,
    private readonly allowedUpdates: readonly string[],
    private readonly log: Logger,
  ) {}

  start(): void {
    this.loop = this.run()
  }

  async stop(): Promise<void> {
    this.controller.abort()
    await this.loop
  }

  private async run(): Promise<void> {
    const signal = this.controller.signal
    let offset: number | undefined
    let failures = 0
    while (!signal.aborted) {
      let updates: Update[]
      try {
        updates = await this.bot.api.getUpdates({ offset, timeout: POLL_SECONDS, allowed_updates: this.allowedUpdates as never }, signal as never)
      } catch (error) {
        if (signal.aborted) return
        this.log.warn({ err: error }, "polling Telegram failed; retrying")
        await this.pause(++failures)
        continue
      }
      const results = await Promise.allSettled(updates.map((update) => this.bot.handleUpdate(update)))
      const unstored = updates.filter((_, i) => results[i]!.status === "rejected").map((update) => update.update_id)
      if (unstored.length === 0) {
        failures = 0
        if (updates.length > 0) offset = updates.at(-1)!.update_id + 1
        continue
      }
      offset = Math.min(...unstored)
      this.log.warn({ updates: unstored }, "Telegram updates not stored; they are fetched again")
      await this.pause(++failures)
    }
  }

  /** Waits before the next poll after a failure, or until stop(). */
  private pause(failures: number): Promise<void> {
    const ms = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.min(failures - 1, 10))
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms)
      this.controller.signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true })
    })
  }
}
