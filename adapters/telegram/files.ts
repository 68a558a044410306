import { GrammyError, InputFile, type Api } from "grammy"
import type { Message } from "grammy/types"
import { FileTooLarge, readLimited } from "../../src/channel/channel.ts"
import type { InboundAttachment, OutgoingFile } from "../../src/core/types.ts"
import { renderTelegram } from "./render.ts"

/** Telegram's caption limit, in characters. */
const CAPTION_LIMIT = 1024
/** sendPhoto takes at most 10 MB; a bigger image goes as a document. */
const PHOTO_LIMIT = 10 * 1024 * 1024
const PHOTO_TYPES = new Set(["image/jpeg", "image/png", "image/gif", "image/webp"])

/** Downloads a file the bot received: getFile for its path, then `<apiRoot>/file/bot<token>/<path>`. */
export type FetchFile = (fileId: string, maxBytes: number) => Promise<Uint8Array>

export function fileFetcher(api: Api, apiRoot: string, token: string): FetchFile {
  return async (fileId, maxBytes) => {
    const file = await api.getFile(fileId)
    if (file.file_size !== undefined && file.file_size > maxBytes) throw new FileTooLarge(maxBytes)
    if (!file.file_path) throw new Error("Telegram gave no path for the file")
    // A self-hosted Bot API server in --local mode answers with an absolute path on its own disk.
    const url = file.file_path.startsWith("/") ? `${apiRoot}/file/bot${token}${file.file_path}` : `${apiRoot}/file/bot${token}/${file.file_path}`
    return readLimited(await fetch(url), maxBytes)
  }
}

/** The files of a message: the largest size of a photo, a document, a voice note, audio, a video or a video note. */
export function attachmentsOf(message: Message, fetchFile: FetchFile): InboundAttachment[] {
  const of = (kind: InboundAttachment["kind"], file: { file_id: string; file_size?: number; file_name?: string; mime_type?: string }, mimeType = file.mime_type): InboundAttachment => ({
    kind,
    name: file.file_name,
    mimeType,
    size: file.file_size,
    download: (maxBytes) => fetchFile(file.file_id, maxBytes),
  })
  const photo = message.photo?.reduce((largest, size) => ((size.file_size ?? size.width * size.height) > (largest.file_size ?? largest.width * largest.height) ? size : largest))
  return [
    photo && of("photo", photo, "image/jpeg"),
    message.document && of("document", message.document),
    message.voice && of("voice", message.voice),
    message.audio && of("audio", message.audio),
    message.video && of("video", message.video),
    message.video_note && of("video_note", message.video_note, "video/mp4"),
  ].filter((attachment) => attachment !== undefined)
}

/** Posts a file: an image as a photo (Telegram shows it inline), anything else as a document. */
export async function sendFile(api: Api, chatId: number, file: OutgoingFile, caption: string, size: number): Promise<number> {
  const [first, ...rest] = caption ? renderTelegram(caption, CAPTION_LIMIT - 1) : []
  const options = first ? { caption: rest.length > 0 ? first.plain + "…" : first.html, parse_mode: rest.length > 0 ? undefined : ("HTML" as const) } : {}
  const asPhoto = PHOTO_TYPES.has(file.mimeType) && size <= PHOTO_LIMIT
  // Only a hint to the user; the file goes out whether or not it is shown.
  await api.sendChatAction(chatId, asPhoto ? "upload_photo" : "upload_document").catch(() => {})
  const asDocument = async () => (await api.sendDocument(chatId, new InputFile(file.path, file.name), options)).message_id
  if (!asPhoto) return asDocument()
  try {
    return (await api.sendPhoto(chatId, new InputFile(file.path, file.name), options)).message_id
  } catch (error) {
    // Telegram refuses some images as photos (PHOTO_INVALID_DIMENSIONS, an odd format): the user still gets the file.
    if (error instanceof GrammyError && error.error_code === 400 && /PHOTO|IMAGE/i.test(error.description)) return asDocument()
    throw error
  }
}
