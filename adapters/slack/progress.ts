import type { webApi } from "@slack/bolt"
import type { Logger } from "pino"
import type { ProgressUpdate } from "../../src/core/types.ts"
import { StatusMessages, type StatusContent, type StatusTiming } from "../status/status-messages.ts"
import { statusHead, toolLines } from "../status/status-text.ts"
import { section, withButtons } from "./blocks.ts"
import type { Place } from "./conversation.ts"
import { escapeMrkdwn } from "./render.ts"

function statusText(update: ProgressUpdate, elapsed: string): string {
  const { title, state } = statusHead(update, elapsed)
  return [`⚙️ *${escapeMrkdwn(title)}*`, `_${state}_`, ...(update.state === "running" ? toolLines(update, escapeMrkdwn) : [])].join("\n")
}

/** The text as a section, with the Stop button under it while the work runs: an update always
 *  names its blocks, since Slack keeps the old ones (the button) otherwise. */
const blocksOf = (content: StatusContent) => (content.stop ? withButtons(content.text, [content.stop]) : [section(content.text)])

/** A batch's status message in the conversation (in its thread, if it has one); Slack refers to it by channel and ts. */
export function progressMessages(web: webApi.WebClient, log: Logger, timing?: StatusTiming): StatusMessages<Place, { channel: string; ts: string }> {
  return new StatusMessages(
    {
      text: statusText,
      post: async (place, content) => {
        const posted = await web.chat.postMessage({ channel: place.channel, thread_ts: place.thread, text: content.text, blocks: blocksOf(content) })
        return { channel: posted.channel ?? place.channel, ts: posted.ts! }
      },
      edit: async (_place, message, content) => void (await web.chat.update({ ...message, text: content.text, blocks: blocksOf(content) })),
      delete: async (_place, message) => void (await web.chat.delete(message)),
      verbs: { post: "post", edit: "update" },
      describe: (place) => ({ channel: place.channel }),
    },
    log,
    timing,
  )
}
