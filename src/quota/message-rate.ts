import type { UserId } from "../core/types.ts"

const MINUTE_MS = 60_000

/** What to do with a user's message: take it, refuse it and tell the sender to slow down, or
 *  refuse it silently (they have been told already in this burst). */
export type Admission = "take" | "slow down" | "refuse"

/**
 * QUOTA_MESSAGES_PER_MINUTE: the messages each user sent in the last minute (a sliding window).
 * A message over the limit is not taken — it costs no model call — and the sender hears about it
 * once per burst: again only after a minute in which they kept under the limit. Kept in memory:
 * the leader takes every message, and a restart forgetting the last minute costs nothing.
 */
export class MessageRate {
  private readonly sent = new Map<UserId, number[]>()
  private readonly told = new Set<UserId>()

  constructor(
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {}

  admit(user: UserId): Admission {
    const now = this.now()
    const recent = (this.sent.get(user) ?? []).filter((at) => at > now - MINUTE_MS)
    if (recent.length < this.perMinute) {
      recent.push(now)
      this.sent.set(user, recent)
      // Under the limit again: the next burst is told about again.
      if (recent.length === 1) this.told.delete(user)
      return "take"
    }
    this.sent.set(user, recent)
    if (this.told.has(user)) return "refuse"
    this.told.add(user)
    return "slow down"
  }
}
