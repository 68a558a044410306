import type { Api } from "grammy"
import type { Logger } from "pino"
import type { ProgressUpdate } from "../../src/core/types.ts"
import { StatusMessages, toolLines } from "../status/status-messages.ts"
import { isNotModified } from "./messages.ts"

/** A task's status message as plain text, so no tool title can break its markup. */
const statusText = (update: ProgressUpdate): string => [`⚙️ ${update.agent} is working`, ...toolLines(update)].join("\n")

/** A task's status message in the chat, referred to by its message id. */
export function progressMessages(api: Api, log: Logger, editIntervalMs?: number): StatusMessages<number, number> {
  return new StatusMessages<number, number>(
    {
      text: statusText,
      post: async (chatId, text) => (await api.sendMessage(chatId, text)).message_id,
      edit: async (chatId, messageId, text) => {
        await api.editMessageText(chatId, messageId, text).catch((error: unknown) => {
          if (!isNotModified(error)) throw error
        })
      },
      delete: async (chatId, messageId) => void (await api.deleteMessage(chatId, messageId)),
      verbs: { post: "send", edit: "edit" },
      describe: (chatId) => ({ chatId }),
    },
    log,
    editIntervalMs,
  )
}
