import type { webApi } from "@slack/bolt"
import type { TextAttachment } from "../../src/core/types.ts"
import { messageIdOf, type Place } from "./conversation.ts"

/** The message metadata every post carries: the core's id for it, to find it again after a crash. */
export const OUTBOX_EVENT_TYPE = "steward_outbox"
/** Pages of history looked through for a send of unknown outcome (200 messages each). */
const LOOKUP_PAGES = 5

export const outboxMetadata = (ref: string | undefined) => (ref ? { event_type: OUTBOX_EVENT_TYPE, event_payload: { id: ref } } : undefined)

/** Slack's three escaped characters, for text posted with `mrkdwn: false`. */
export const escapePlain = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")

/** A text sent as a file (files.uploadV2 with its content), in the conversation's thread if it has one. */
export async function uploadTextFile(web: webApi.WebClient, place: Place, file: TextAttachment): Promise<void> {
  const destination = place.thread ? { channel_id: place.channel, thread_ts: place.thread } : { channel_id: place.channel }
  await web.files.uploadV2({ ...destination, content: file.text, filename: file.name, title: file.name })
}

type Found = { ts?: string; metadata?: { event_type?: string; event_payload?: Record<string, unknown> } }

/**
 * A message posted with `ref` in its metadata since `since`: conversations.history for a DM,
 * conversations.replies for a thread, both with include_all_metadata.
 */
export async function findByMetadata(web: webApi.WebClient, place: Place, ref: string, since: Date): Promise<{ messageId: string } | undefined> {
  const oldest = (since.getTime() / 1000).toFixed(6)
  let cursor: string | undefined
  for (let page = 0; page < LOOKUP_PAGES; page++) {
    const query = { channel: place.channel, oldest, limit: 200, include_all_metadata: true, cursor }
    const answer = place.thread ? await web.conversations.replies({ ...query, ts: place.thread }) : await web.conversations.history(query)
    const found = (answer.messages as Found[] | undefined)?.find((message) => message.metadata?.event_type === OUTBOX_EVENT_TYPE && message.metadata.event_payload?.id === ref)
    if (found?.ts) return { messageId: messageIdOf(place.channel, found.ts) }
    cursor = answer.response_metadata?.next_cursor || undefined
    if (!cursor) return undefined
  }
  return undefined
}
