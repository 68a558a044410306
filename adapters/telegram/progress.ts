import type { Api } from "grammy"
import type { Logger } from "pino"
import type { ProgressUpdate } from "../../src/core/types.ts"
import { StatusMessages, type StatusContent, type StatusTiming } from "../status/status-messages.ts"
import { statusHead, toolLines } from "../status/status-text.ts"
import { inlineKeyboard, isNotModified } from "./messages.ts"

/** A status message as plain text, so no title can break its markup; tool calls only while it runs. */
function statusText(update: ProgressUpdate, elapsed: string): string {
  const { title, state } = statusHead(update, elapsed)
  return [`⚙️ ${title}`, state, ...(update.state === "running" ? toolLines(update) : [])].join("\n")
}

/** The Stop button as an inline keyboard; none, and an edit removes the one shown. */
const markupOf = (content: StatusContent) => (content.stop ? { reply_markup: inlineKeyboard([content.stop]) } : {})

/** A batch's status message in the chat, referred to by its message id. */
export function progressMessages(api: Api, log: Logger, timing?: StatusTiming): StatusMessages<number, number> {
  return new StatusMessages<number, number>(
    {
      text: statusText,
      post: async (chatId, content) => (await api.sendMessage(chatId, content.text, markupOf(content))).message_id,
      edit: async (chatId, messageId, content) => {
        await api.editMessageText(chatId, messageId, content.text, markupOf(content)).catch((error: unknown) => {
          if (!isNotModified(error)) throw error
        })
      },
      delete: async (chatId, messageId) => void (await api.deleteMessage(chatId, messageId)),
      verbs: { post: "send", edit: "edit" },
      describe: (chatId) => ({ chatId }),
    },
    log,
    timing,
  )
}
