import { randomInt } from "node:crypto"
import type { Api } from "grammy"
import type { Logger } from "pino"
import type { LiveText } from "../../src/channel/channel.ts"
import { LiveMessages, type LiveWay } from "../live/live-messages.ts"
import { isMessageGone, isNotModified } from "./messages.ts"
import { TELEGRAM_LIMIT } from "./render.ts"

export interface TelegramLiveOptions {
  /** Pause between two drafts of one answer (default 300 ms). */
  draftIntervalMs?: number
  /** Pause between two edits of a growing message (default 1 s). */
  editIntervalMs?: number
}

/** Telegram answers 429 to a message edited more than about once a second. */
const EDIT_INTERVAL_MS = 1000

/** A draft's id, or the id of the message edited as the answer grows. */
type Ref = number

const CLIPPED = "…"

/** Text so far as one message can show it: a long answer shows its newest part (the final
 *  message is split as usual). Plain text: half-written Markdown is no valid HTML. */
const clip = (text: string) => (text.length <= TELEGRAM_LIMIT ? text : CLIPPED + text.slice(text.length - TELEGRAM_LIMIT + CLIPPED.length))

/**
 * Telegram's live answers. A private chat gets drafts (`sendMessageDraft`: ephemeral, gone once
 * the final message is sent); where a draft is refused — an error from the API, or a group,
 * which has no drafts — one message is sent and edited as the answer grows, at most once a
 * second, and the final message is that message edited into the answer's first part.
 */
export class TelegramLive {
  private readonly messages: LiveMessages<number, Ref>
  /** Chats that refused a draft: their later answers go straight to a message. */
  private readonly refused = new Set<number>()
  private readonly draft: LiveWay<number, Ref>
  private readonly message: LiveWay<number, Ref>

  constructor(api: Api, log: Logger, options: TelegramLiveOptions = {}) {
    this.draft = {
      name: "draft",
      intervalMs: options.draftIntervalMs ?? 300,
      endsInPlace: false,
      show: async (chatId, text, draftId) => {
        const id = draftId ?? randomInt(1, 2 ** 31 - 1)
        await api.sendMessageDraft(chatId, id, clip(text)).catch((error: unknown) => {
          this.refused.add(chatId)
          throw error
        })
        return id
      },
      // A draft cannot be taken back; it disappears by itself.
      remove: async () => {},
    }
    const remove = async (chatId: number, messageId: number) => {
      await api.deleteMessage(chatId, messageId).catch((error: unknown) => {
        if (!isMessageGone(error)) throw error
      })
    }
    this.message = {
      name: "message",
      intervalMs: options.editIntervalMs ?? EDIT_INTERVAL_MS,
      endsInPlace: true,
      show: async (chatId, text, messageId) => {
        if (messageId === undefined) return (await api.sendMessage(chatId, clip(text))).message_id
        await api.editMessageText(chatId, messageId, clip(text)).catch((error: unknown) => {
          if (!isNotModified(error)) throw error
        })
        return messageId
      },
      remove,
      // Half an answer must not stand as if it were the answer: the replayed turn sends it whole.
      interrupted: remove,
    }
    this.messages = new LiveMessages(log, { draft: this.draft, message: this.message }, String)
  }

  open(chatId: number, id: string): LiveText {
    const drafts = chatId > 0 && !this.refused.has(chatId)
    return this.messages.open(id, chatId, drafts ? [this.draft, this.message] : [this.message])
  }

  /** Ends answer `id`: `edit` is given the message that showed it as it grew, to be edited into
   *  the final text in the chat's next turn for an edit; not called when a draft showed it (or
   *  nothing did). */
  async finish(id: string, edit: (messageId: number) => Promise<void>): Promise<void> {
    await this.messages.finish(id, async (shown) => {
      if (shown.way === this.message) await edit(shown.ref)
    })
  }

  restore: LiveMessages<number, Ref>["restore"] = (state, tidy) => this.messages.restore(state, tidy)
  tidy = () => this.messages.tidy()
  stop = () => this.messages.stop()
}
