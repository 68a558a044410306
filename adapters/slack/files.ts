import { readFile } from "node:fs/promises"
import type { webApi } from "@slack/bolt"
import { readLimited, UndeliverableMessage } from "../../src/channel/channel.ts"
import type { InboundAttachment, OutgoingFile } from "../../src/core/types.ts"
import type { Place } from "./conversation.ts"

/** The fields of a file in a message event that Steward reads. */
export type SlackFile = { id: string; name?: string; mimetype?: string; size?: number; url_private_download?: string; url_private?: string; mode?: string }

/** The files of a message as attachments, downloaded with the bot token (Slack's private URLs need it). */
export function attachmentsOf(files: readonly SlackFile[] | undefined, botToken: string): InboundAttachment[] {
  // "tombstone" and "hidden_by_limit" files have no content the bot can fetch.
  return (files ?? [])
    .filter((file) => (file.url_private_download ?? file.url_private) && file.mode !== "tombstone" && file.mode !== "hidden_by_limit")
    .map((file) => ({
      kind: file.mimetype?.startsWith("audio/") ? "audio" : file.mimetype?.startsWith("video/") ? "video" : "document",
      name: file.name,
      mimeType: file.mimetype,
      size: file.size,
      download: (maxBytes) => download((file.url_private_download ?? file.url_private)!, botToken, file.mimetype, maxBytes),
    }))
}

async function download(url: string, botToken: string, mimeType: string | undefined, maxBytes: number): Promise<Uint8Array> {
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
