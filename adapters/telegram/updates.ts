import type { CallbackQuery, Message, MessageOrigin } from "grammy/types"
import type { InboundMessage } from "../../src/core/types.ts"
import { attachmentsOf, type FetchFile } from "./files.ts"

/** A chat: in a private chat its id is its user's id, so it names one person's DM; a group's id
 *  is negative, and several people write in it (the core acts for each message's author). */
const conversationOf = (chatId: number) => `telegram:${chatId}`

const GROUP_CHATS = new Set(["group", "supergroup"])

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

/** A text message, or files with their caption, from a person in a private chat or addressed to
 *  Steward in a group; undefined for anything Steward does not take (stickers, locations,
 *  channels, a group's other talk). */
export function inboundOfMessage(updateId: number, message: Message, botUsername: string, fetchFile: FetchFile): InboundMessage | undefined {
  if (!message.from || message.from.is_bot || !addressed(message, botUsername)) return undefined
  const attachments = attachmentsOf(message, fetchFile)
  if (message.text === undefined && attachments.length === 0) return undefined
  return {
    conversation: conversationOf(message.chat.id),
    user: `telegram:${message.from.id}`,
    text: withoutMention(withoutBotName(message.text ?? message.caption ?? "", botUsername), botUsername),
    eventId: eventIdOf(updateId),
    ...(attachments.length > 0 && { attachments }),
    ...(message.forward_origin && { forwardedFrom: originOf(message.forward_origin) }),
  }
}

/** Who wrote a forwarded message, as the user would name them. */
function originOf(origin: MessageOrigin): string {
  switch (origin.type) {
    case "user":
      return [origin.sender_user.first_name, origin.sender_user.last_name, origin.sender_user.username && `(@${origin.sender_user.username})`].filter(Boolean).join(" ")
    case "hidden_user":
      return origin.sender_user_name
    case "chat":
      return origin.sender_chat.title ?? "a chat"
    case "channel":
      return origin.chat.title ?? "a channel"
  }
}

/** A button press in a private chat or a group; its text is the pressed button's label, read
 *  from the message it sits under. */
export function inboundOfCallback(updateId: number, query: CallbackQuery): InboundMessage | undefined {
  const message = query.message
  if (!message || !(message.chat.type === "private" || GROUP_CHATS.has(message.chat.type)) || query.from.is_bot || query.data === undefined) return undefined
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

/** In a group, Steward takes what is meant for it — a command, a message naming @<bot>, a reply
 *  to one of its messages — and leaves the rest of the group's talk alone (with privacy mode
 *  off, Telegram sends the bot every message). */
function addressed(message: Message, botUsername: string): boolean {
  if (message.chat.type === "private") return true
  if (!GROUP_CHATS.has(message.chat.type)) return false
  const text = message.text ?? message.caption ?? ""
  const repliedTo = message.reply_to_message?.from
  const command = /^\/\w+(?:@(\w+))?/.exec(text)
  const forUs = (name: string | undefined) => name?.toLowerCase() === botUsername.toLowerCase()
  return (command !== null && (command[1] === undefined || forUs(command[1]))) || mentionOf(botUsername).test(text) || (repliedTo?.is_bot === true && forUs(repliedTo.username))
}

const mentionOf = (botUsername: string) => new RegExp(`(^|\\s)@${botUsername}\\b`, "gi")

/** "@steward_bot what's up" is "what's up" to the core. */
function withoutMention(text: string, botUsername: string): string {
  return mentionOf(botUsername).test(text) ? text.replace(mentionOf(botUsername), " ").trim() : text
}
