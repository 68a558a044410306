import type { ServerResponse } from "node:http"
import type { Update } from "grammy/types"
import { ApiError, type Params } from "./telegram-requests.ts"

/** Telegram holds a long poll for at most about this long, whatever `timeout` asks for. */
const MAX_POLL_SECONDS = 50
/** Update types Telegram sends only when `allowed_updates` names them. */
const OPT_IN_UPDATES = new Set(["chat_member", "message_reaction", "message_reaction_count"])

type Wake = "update" | "timeout" | "conflict" | "gone" | "closed"

/**
 * The updates waiting for a bot, and getUpdates' long poll over them: one poll at a time (a
 * second one ends the first with a conflict), `offset` confirming what came before it, and
 * `allowed_updates` kept from one call to the next.
 */
export class UpdateQueue {
  private queue: Update[] = []
  private allowed: Set<string> | undefined
  /** The getUpdates call waiting for an update; Telegram allows one at a time. */
  private poller: { wake(reason: Wake): void } | undefined

  push(update: Update): void {
    this.queue.push(update)
    this.poller?.wake("update")
  }

  /** Ends a waiting poll with no updates. */
  close(): void {
    this.poller?.wake("closed")
  }

  async getUpdates(params: Params, res: ServerResponse): Promise<Update[]> {
    this.poller?.wake("conflict")
    if (params.offset !== undefined) this.queue = this.queue.filter((update) => update.update_id >= Number(params.offset))
    if (Array.isArray(params.allowed_updates)) this.allowed = params.allowed_updates.length > 0 ? new Set(params.allowed_updates.map(String)) : undefined
    const limit = Math.min(Math.max(Number(params.limit ?? 100) || 100, 1), 100)
    const deadline = Date.now() + Math.min(Math.max(Number(params.timeout ?? 0) || 0, 0), MAX_POLL_SECONDS) * 1000
    for (;;) {
      const updates = this.deliverable(limit)
      if (updates.length > 0 || Date.now() >= deadline) return updates
      const reason = await new Promise<Wake>((resolve) => {
        const self = {
          wake: (why: Wake) => {
            clearTimeout(timer)
            res.off("close", gone)
            if (this.poller === self) this.poller = undefined
            resolve(why)
          },
        }
        const gone = () => self.wake("gone")
        const timer = setTimeout(() => self.wake("timeout"), deadline - Date.now())
        res.on("close", gone)
        this.poller = self
      })
      if (reason === "conflict") throw new ApiError(409, "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running")
      if (reason === "gone" || reason === "closed") return []
    }
  }

  private deliverable(limit: number): Update[] {
    // Telegram never queues updates of types the bot did not ask for.
    const allowed = this.allowed
    this.queue = this.queue.filter((update) => {
      const type = Object.keys(update).find((key) => key !== "update_id") ?? ""
      return allowed ? allowed.has(type) : !OPT_IN_UPDATES.has(type)
    })
    return this.queue.slice(0, limit)
  }
}
