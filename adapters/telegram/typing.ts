import type { Api } from "grammy"
import type { Logger } from "pino"

/** Telegram shows "typing…" for about 5 s after each sendChatAction, so it is renewed every 4 s. */
const TYPING_RENEW_MS = 4000

/** "typing…" in every chat that has work running, from busy until not busy. */
export class TypingIndicator {
  private readonly renewals = new Map<number, NodeJS.Timeout>()

  constructor(
    private readonly api: Api,
    private readonly log: Logger,
    private readonly renewMs = TYPING_RENEW_MS,
  ) {}

  set(chatId: number, busy: boolean): void {
    if (!busy) return this.clear(chatId)
    if (this.renewals.has(chatId)) return
    this.type(chatId)
    // unref: a chat that looks busy must not keep the process alive on its own.
    this.renewals.set(chatId, setInterval(() => this.type(chatId), this.renewMs).unref())
  }

  stop(): void {
    for (const chatId of [...this.renewals.keys()]) this.clear(chatId)
  }

  private clear(chatId: number): void {
    clearInterval(this.renewals.get(chatId))
    this.renewals.delete(chatId)
  }

  private type(chatId: number): void {
    this.api.sendChatAction(chatId, "typing").catch((error: unknown) => this.log.warn({ err: error, chatId }, "could not show typing"))
  }
}
