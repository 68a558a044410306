import { readFile } from "node:fs/promises"
import type { webApi } from "@slack/bolt"
import { readLimited, UndeliverableMessage } from "../../src/channel/channel.ts"
import type { InboundAttachment, OutgoingFile } from "../../src/core/types.ts"
import type { Place } from "./conversation.ts"

/** The fields of a file in a message event that Steward reads. */
export type SlackFile = { id: string; name?: string; mimetype?: string; size?: number; url_private_download?: string; url_private?: string; mode?: string }

/** Slack's file host, where `url_private_download` points. */
export const SLACK_FILE_ORIGIN = "https://files.slack.com"

/**
 * Where a download may carry the bot token: Slack's file host over https, and the origin of
 * SLACK_API_URL when one is set — every API call already carries the token there (a proxy the
 * operator chose, or a test's fake Web API, which serves its files too). Nothing else: a file
 * URL in an event names any host it likes.
 */
export function tokenOrigins(apiUrl: string | undefined): ReadonlySet<string> {
  return new Set([SLACK_FILE_ORIGIN, ...(apiUrl && URL.canParse(apiUrl) ? [new URL(apiUrl).origin] : [])])
}

/** The files of a message as attachments, downloaded with the bot token (Slack's private URLs
 *  need it) from the origins that may have it; a file elsewhere is refused, not downloaded. */
export function attachmentsOf(files: readonly SlackFile[] | undefined, botToken: string, origins: ReadonlySet<string>): InboundAttachment[] {
  // "tombstone" and "hidden_by_limit" files have no content the bot can fetch.
  return (files ?? [])
    .filter((file) => (file.url_private_download ?? file.url_private) && file.mode !== "tombstone" && file.mode !== "hidden_by_limit")
    .map((file) => ({
      kind: file.mimetype?.startsWith("audio/") ? "audio" : file.mimetype?.startsWith("video/") ? "video" : "document",
      name: file.name,
      mimeType: file.mimetype,
      size: file.size,
      download: (maxBytes) => download((file.url_private_download ?? file.url_private)!, botToken, origins, file.mimetype, maxBytes),
    }))
}

async function download(url: string, botToken: string, origins: ReadonlySet<string>, mimeType: string | undefined, maxBytes: number): Promise<Uint8Array> {
  const origin = URL.canParse(url) ? new URL(url).origin : undefined
  if (!origin || !origins.has(origin)) throw new Error(`the file is not on Slack's file host (${origin ?? "no valid URL"}), so it was not downloaded`)
  // A redirect to another origin drops the Authorization header (fetch's rule for cross-origin redirects).
  const response = await fetch(url, { headers: { Authorization: `Bearer ${botToken}` } })
  // Without the files:read scope Slack answers 200 with its sign-in page instead of the file.
  if (response.headers.get("content-type")?.startsWith("text/html") && !mimeType?.startsWith("text/html")) {
    await response.body?.cancel()
    throw new Error("Slack sent a sign-in page instead of the file: the bot token needs the files:read scope")
  }
  return readLimited(response, maxBytes)
}

/** Uploads a file into the conversation's channel and thread (files.uploadV2: getUploadURLExternal,
 *  the upload, completeUploadExternal), the caption as its comment. Returns `file:<id>`: a file
 *  is never edited, so no message ts is needed. */
export async function uploadFile(web: webApi.WebClient, place: Place, file: OutgoingFile, caption: string): Promise<string> {
  const data = await readFile(file.path).catch((error: NodeJS.ErrnoException) => {
    throw new UndeliverableMessage(`the file to send cannot be read: ${error.code ?? error.message}`)
  })
  const common = { file: data, filename: file.name, title: file.name, ...(caption && { initial_comment: caption }) }
  const result = (await web.files.uploadV2(place.thread ? { ...common, channel_id: place.channel, thread_ts: place.thread } : { ...common, channel_id: place.channel })) as { files?: Array<{ files?: Array<{ id?: string }> }> }
  const id = result.files?.[0]?.files?.[0]?.id
  return `file:${id ?? file.name}`
}
