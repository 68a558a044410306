/** File extensions and the MIME types they stand for: the common ones people send and get back. */
const BY_EXTENSION: Record<string, string> = {
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  png: "image/png",
  gif: "image/gif",
  webp: "image/webp",
  pdf: "application/pdf",
  txt: "text/plain",
  md: "text/markdown",
  csv: "text/csv",
  json: "application/json",
  html: "text/html",
  zip: "application/zip",
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  pptx: "application/vnd.openxmlformats-officedocument.presentationml.presentation",
  ogg: "audio/ogg",
  oga: "audio/ogg",
  mp3: "audio/mpeg",
  m4a: "audio/mp4",
  wav: "audio/wav",
  webm: "audio/webm",
  mp4: "video/mp4",
  mov: "video/quicktime",
}

const OCTET_STREAM = "application/octet-stream"

/** The MIME type a file name's extension stands for; application/octet-stream when unknown. */
export function mediaTypeOf(name: string): string {
  const extension = /\.([A-Za-z0-9]+)$/.exec(name)?.[1]?.toLowerCase()
  return (extension && BY_EXTENSION[extension]) || OCTET_STREAM
}

/** An extension for a MIME type (for files that come without a name), "bin" when unknown. */
export function extensionOf(mediaType: string | undefined): string {
  const base = mediaType?.split(";")[0]?.trim().toLowerCase()
  return Object.entries(BY_EXTENSION).find(([, type]) => type === base)?.[0] ?? "bin"
}

/** Images the chat models read (the formats OpenAI and Anthropic both accept). */
export const isModelImage = (mediaType: string) => ["image/jpeg", "image/png", "image/gif", "image/webp"].includes(mediaType)

/** "834 B", "12.5 KB", "3.2 MB". */
export function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`
}
