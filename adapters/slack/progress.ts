import type { webApi } from "@slack/bolt"
import type { Logger } from "pino"
import type { ProgressUpdate } from "../../src/core/types.ts"
import { StatusMessages, toolLines } from "../status/status-messages.ts"
import type { Place } from "./conversation.ts"
import { escapeMrkdwn } from "./render.ts"

const statusText = (update: ProgressUpdate): string => [`⚙️ _${escapeMrkdwn(update.agent)} is working_`, ...toolLines(update, escapeMrkdwn)].join("\n")

/** A task's status message in the conversation (in its thread, if it has one); Slack refers to it by channel and ts. */
export function progressMessages(web: webApi.WebClient, log: Logger, editIntervalMs?: number): StatusMessages<Place, { channel: string; ts: string }> {
  return new StatusMessages(
    {
      text: statusText,
      post: async (place, text) => {
        const posted = await web.chat.postMessage({ channel: place.channel, thread_ts: place.thread, text })
        return { channel: posted.channel ?? place.channel, ts: posted.ts! }
      },
      edit: async (_place, message, text) => void (await web.chat.update({ ...message, text })),
      delete: async (_place, message) => void (await web.chat.delete(message)),
      verbs: { post: "post", edit: "update" },
      describe: (place) => ({ channel: place.channel }),
    },
    log,
    editIntervalMs,
  )
}
