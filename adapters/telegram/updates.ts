import type { CallbackQuery, Message } from "grammy/types"
import type { InboundMessage } from "../../src/core/types.ts"
import { attachmentsOf, type FetchFile } from "./files.ts"

/** Telegram private chats only: a private chat's id is its user's id, so it names one person's DM. */
const conversationOf = (chatId: number) => `telegram:${chatId}`

/** The chat id in `telegram:<chat_id>`; anything else is a bug in the caller, not a platform error. */
/** The number in `telegram:<id>`: a chat's or a user's (in a private chat they are the same). */
export function telegramIdOf(prefixed: string): number | undefined {
  const id = Number(prefixed.slice("telegram:".length))
  return prefixed.startsWith("telegram:") && Number.isSafeInteger(id) ? id : undefined
}

export function chatIdOf(conversation: string): number {
  const id = telegramIdOf(conversation)
  if (id === undefined) throw new Error(`not a Telegram conversation: ${conversation}`)
  return id
}

const eventIdOf = (updateId: number) => `telegram:${updateId}`

/** A text message, or files with their caption, from a person in a private chat; undefined for
 *  anything Steward does not take (stickers, locations, other chats). */
export function inboundOfMessage(updateId: number, message: Message, botUsername: string, fetchFile: FetchFile): InboundMessage | undefined {
  if (message.chat.type !== "private" || !message.from || message.from.is_bot) return undefined
  const attachments = attachmentsOf(message, fetchFile)
  if (message.text === undefined && attachments.length === 0) return undefined
  return {
    conversation: conversationOf(message.chat.id),
    user: `telegram:${message.from.id}`,
    text: withoutBotName(message.text ?? message.caption ?? "", botUsername),
    eventId: eventIdOf(updateId),
    ...(attachments.length > 0 && { attachments }),
  }
}

/** A button press in a private chat; its text is the pressed button's label, read from the message it sits under. */
export function inboundOfCallback(updateId: number, query: CallbackQuery): InboundMessage | undefined {
  const message = query.message
  if (!message || message.chat.type !== "private" || query.from.is_bot || query.data === undefined) return undefined
  const keyboard = "reply_markup" in message ? message.reply_markup?.inline_keyboard : undefined
  const pressed = keyboard?.flat().find((button) => "callback_data" in button && button.callback_data === query.data)
  return {
    conversation: conversationOf(message.chat.id),
    user: `telegram:${query.from.id}`,
    text: pressed?.text ?? query.data,
    eventId: eventIdOf(updateId),
    action: query.data,
  }
}

/** Telegram's menu may send `/tasks@steward_bot`; the core knows commands as `/tasks`. */
function withoutBotName(text: string, botUsername: string): string {
  const command = /^(\/\w+)@(\w+)/.exec(text)
  return command && command[2].toLowerCase() === botUsername.toLowerCase() ? command[1] + text.slice(command[0].length) : text
}
