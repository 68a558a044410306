import type { Message, Update } from "grammy/types"

/** Updates as Telegram sends them to a bot: what a test pushes into the fake Telegram API. */

// Message and update ids are shared by all fakes and helpers, so user and bot messages never collide.
let lastMessageId = 0
let lastUpdateId = 0
let lastCallbackId = 0
export const nextMessageId = () => ++lastMessageId
export const now = () => Math.floor(Date.now() / 1000)

/** A new message in the private chat `chatId` from `fromId`, as its fields begin. */
function privateMessage(chatId: number, fromId: number) {
  return {
    message_id: nextMessageId(),
    date: now(),
    chat: { id: chatId, type: "private" as const, first_name: `User ${fromId}` },
    from: { id: fromId, is_bot: false, first_name: `User ${fromId}` },
  }
}

/** A chat as Telegram describes it: a negative id is a group's, a positive one a private chat's. */
export function chatWith(id: number) {
  return id < 0 ? { id, type: "group" as const, title: `Group ${id}` } : { id, type: "private" as const, first_name: `User ${id}` }
}

/** A message from `fromId` in the group `chatId` (negative), with the fields given (a reply's
 *  `reply_to_message`, say); commands carry their bot_command entity as in textUpdate. */
export function groupUpdate(chatId: number, fromId: number, text: string, extra: Partial<Message> = {}): Update {
  const update = textUpdate(chatId, fromId, text)
  return { ...update, message: { ...update.message!, chat: chatWith(chatId), ...extra } as Update["message"] & object }
}

export function textUpdate(chatId: number, fromId: number, text: string): Update {
  // grammY's bot.command() matches on the bot_command entity, as Telegram sends it.
  const command = /^\/[A-Za-z0-9_]{1,32}(?:@\w+)?/.exec(text)
  return {
    update_id: ++lastUpdateId,
    message: {
      ...privateMessage(chatId, fromId),
      text,
      ...(command && { entities: [{ type: "bot_command", offset: 0, length: command[0].length }] }),
    },
  }
}

/** A message with a file (`photo`, `document`, `voice`…) and an optional caption. */
export function fileUpdate(chatId: number, fromId: number, content: Partial<Message>, caption?: string): Update {
  return {
    update_id: ++lastUpdateId,
    message: {
      ...privateMessage(chatId, fromId),
      ...(caption !== undefined && { caption }),
      ...content,
    } as Update["message"] & object,
  }
}

/** A button press on message `messageId`; `pushUpdate` swaps in that message as the fake sent it. */
export function callbackUpdate(chatId: number, fromId: number, messageId: number, data: string): Update {
  const chat = { id: chatId, type: "private" as const, first_name: `User ${fromId}` }
  return {
    update_id: ++lastUpdateId,
    callback_query: {
      id: `cbq-${++lastCallbackId}`,
      from: { id: fromId, is_bot: false, first_name: `User ${fromId}` },
      message: { message_id: messageId, date: now(), chat },
      chat_instance: String(chatId),
      data,
    },
  }
}
