import type { Quotas } from "../config/quotas.ts"
import type { UserId } from "../core/types.ts"
import type { UsageSample } from "../usage/usage.ts"
import { MessageRate } from "./message-rate.ts"

export interface QuotaGuardDeps {
  quotas: Quotas
  isOwner: (user: UserId) => boolean
  /** Usage samples taken at or after `since` (ms): the store's, so every process's runs count. */
  usageSince: (since: number) => Promise<UsageSample[]>
  now?: () => number
}

/** Model tokens per user read from the store at most this often (and after each call recorded
 *  here): another process's calls are seen within this time. */
const TOKENS_FRESH_MS = 5_000

/** The UTC day (YYYY-MM-DD) of a time, and where it began (ms). */
export function utcDay(at: number): { day: string; start: number } {
  const day = new Date(at).toISOString().slice(0, 10)
  return { day, start: Date.parse(`${day}T00:00:00Z`) }
}

/** Tokens per user in the samples (input and output; every role and agent counted). */
export function tokensByUser(samples: Iterable<UsageSample>): Map<UserId, number> {
  const totals = new Map<UserId, number>()
  for (const sample of samples) if (sample.user) totals.set(sample.user, (totals.get(sample.user) ?? 0) + sample.input + sample.output)
  return totals
}

/**
 * The per-user quotas where they are decided at run time: messages per minute and the day's
 * model tokens. Owners are never limited, so they keep being answered when others hit theirs.
 */
export class QuotaGuard {
  private readonly rate: MessageRate
  private readonly now: () => number
  private tokens?: { at: number; day: string; byUser: Promise<Map<UserId, number>> }
  /** Users told today that their tokens are used up (told once a day, not at every message). */
  private readonly toldTokens = new Map<UserId, string>()

  constructor(private readonly deps: QuotaGuardDeps) {
    this.now = deps.now ?? Date.now
    this.rate = new MessageRate(deps.quotas.messagesPerMinute, this.now)
  }

  get quotas(): Quotas {
    return this.deps.quotas
  }

  limited(user: UserId): boolean {
    return !this.deps.isOwner(user)
  }

  /**
   * QUOTA_MESSAGES_PER_MINUTE: undefined to take the message; otherwise it is not taken, and the
   * text is what the sender is told ("" when they were told already in this burst).
   */
  rateRefusal(user: UserId): string | undefined {
    if (!this.limited(user)) return undefined
    const admission = this.rate.admit(user)
    if (admission === "take") return undefined
    if (admission === "refuse") return ""
    return `You are sending messages faster than I take them (${this.quotas.messagesPerMinute} a minute). I skipped the ones after that; please wait a minute and send what still matters.`
  }

  /** QUOTA_TOKENS_PER_DAY for a message to the Teller: undefined to take it; otherwise it is not
   *  taken, and the text is what the sender is told (once a day; "" after that). */
  async tokensNotice(user: UserId): Promise<string | undefined> {
    const refusal = await this.tokenRefusal(user)
    if (!refusal) return undefined
    const today = utcDay(this.now()).day
    if (this.toldTokens.get(user) === today) return ""
    this.toldTokens.set(user, today)
    return refusal
  }

  /** Why a run for `user` may not start now: their model tokens for today are used up. */
  async tokenRefusal(user: UserId): Promise<string | undefined> {
    if (!this.limited(user)) return undefined
    const used = await this.tokensToday(user)
    if (used < this.quotas.tokensPerDay) return undefined
    return `You have used today's ${this.quotas.tokensPerDay} model tokens (QUOTA_TOKENS_PER_DAY); I can work for you again after midnight UTC.`
  }

  /** A model call's usage was recorded (its store write issued): counted at once, so the check
   *  before the run's next call sees it (a store read in flight may count it twice: too early
   *  a refusal, never too late). Other processes' calls are read from the store. */
  usageRecorded(sample: UsageSample): void {
    const tokens = this.tokens
    if (!tokens || !sample.user || tokens.day !== utcDay(this.now()).day) return
    const user = sample.user
    tokens.byUser = tokens.byUser.then((byUser) => byUser.set(user, (byUser.get(user) ?? 0) + sample.input + sample.output))
  }

  async tokensToday(user: UserId): Promise<number> {
    const now = this.now()
    const { day, start } = utcDay(now)
    if (!this.tokens || this.tokens.day !== day || now - this.tokens.at > TOKENS_FRESH_MS) {
      const byUser = this.deps.usageSince(start).then(tokensByUser)
      // A failed read is not cached: the next check asks again.
      byUser.catch(() => (this.tokens = undefined))
      this.tokens = { at: now, day, byUser }
    }
    return (await this.tokens.byUser).get(user) ?? 0
  }
}
