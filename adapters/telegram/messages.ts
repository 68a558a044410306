import { GrammyError, InputFile, type Api } from "grammy"
import type { InlineKeyboardMarkup } from "grammy/types"
import { UndeliverableMessage } from "../../src/channel/channel.ts"
import type { Button, TextAttachment } from "../../src/core/types.ts"
import { renderTelegram, TELEGRAM_LIMIT, type Chunk } from "./render.ts"

/** Telegram's bound on `callback_data`. */
const CALLBACK_DATA_LIMIT = 64
const TRUNCATED = "…"

const refusedBecause = (error: unknown, reason: RegExp) => error instanceof GrammyError && error.error_code === 400 && reason.test(error.description)
/** Telegram could not read the HTML: the chunk goes out again as plain text. */
const isEntityError = (error: unknown) => refusedBecause(error, /can't parse entities/i)
/** An edit to what the message already says: the wanted state is already there. */
export const isNotModified = (error: unknown) => refusedBecause(error, /message is not modified/i)
/** The user deleted the message: there is nothing left to edit, now or on a retry. */
export const isMessageGone = (error: unknown) => refusedBecause(error, /message to edit not found/i)

/** Telegram refused the request itself — 400 Bad Request ("chat not found", "message is too
 *  long"…), 403 Forbidden ("bot was blocked by the user"…) — and refuses it again if it is sent
 *  again. 429 and 5xx are retried by auto-retry and then by the outbox; 401/404 (a wrong token)
 *  and 409 are a deployment's to fix, so those messages wait for it rather than being dropped. */
export const isPermanentRefusal = (error: unknown) => error instanceof GrammyError && (error.error_code === 400 || error.error_code === 403)

/** One button per row: option labels are sentences as often as words, and rows keep them readable. */
export function inlineKeyboard(buttons: Button[]): InlineKeyboardMarkup {
  for (const button of buttons) {
    const bytes = Buffer.byteLength(button.id)
    if (bytes < 1 || bytes > CALLBACK_DATA_LIMIT) throw new UndeliverableMessage(`button id must be 1-${CALLBACK_DATA_LIMIT} bytes for Telegram, got ${bytes}: ${button.id}`)
  }
  return { inline_keyboard: buttons.map((button) => [{ text: button.label, callback_data: button.id }]) }
}

/** Runs the HTML form of a call; when Telegram rejects its entities, the plain-text form instead. */
async function withPlainFallback<T>(html: () => Promise<T>, plain: () => Promise<T>): Promise<T> {
  try {
    return await html()
  } catch (error) {
    if (!isEntityError(error)) throw error
    return plain()
  }
}

/** Sends one chunk as HTML (as plain text when Telegram cannot parse it), or as plain text only. */
export async function sendChunk(api: Api, chatId: number, chunk: Chunk, replyMarkup?: InlineKeyboardMarkup, plainOnly = false): Promise<number> {
  if (plainOnly) return (await api.sendMessage(chatId, chunk.plain, { reply_markup: replyMarkup })).message_id
  const sent = await withPlainFallback(
    () => api.sendMessage(chatId, chunk.html, { parse_mode: "HTML", reply_markup: replyMarkup }),
    () => api.sendMessage(chatId, chunk.plain, { reply_markup: replyMarkup }),
  )
  return sent.message_id
}

/** A message's new text as one chunk: an edit cannot grow into several messages, so a longer text is cut with "…". */
export function renderSingle(markdown: string, onFallback?: (error: unknown) => void): Chunk {
  const [first, ...rest] = renderTelegram(markdown, TELEGRAM_LIMIT - TRUNCATED.length, onFallback)
  if (!first) throw new UndeliverableMessage("nothing to show: the message is empty")
  return rest.length === 0 ? first : { html: first.html + TRUNCATED, plain: first.plain + TRUNCATED }
}

/** Replaces a message's text and, since no reply_markup is sent, removes its buttons. */
export async function editChunk(api: Api, chatId: number, messageId: number, chunk: Chunk): Promise<void> {
  await withPlainFallback(
    () => api.editMessageText(chatId, messageId, chunk.html, { parse_mode: "HTML" }),
    () => api.editMessageText(chatId, messageId, chunk.plain),
  ).catch((error: unknown) => {
    if (!isNotModified(error)) throw error
  })
}

/** A text sent as a document (sendDocument with the file's bytes): a reply too long for messages. */
export async function sendTextFile(api: Api, chatId: number, file: TextAttachment): Promise<number> {
  const sent = await api.sendDocument(chatId, new InputFile(Buffer.from(file.text, "utf8"), file.name))
  return sent.message_id
}
