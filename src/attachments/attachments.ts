import { mkdir, open } from "node:fs/promises"
import path from "node:path"
import type { Logger } from "pino"
import { FileTooLarge } from "../channel/channel.ts"
import { incident } from "../core/errors.ts"
import { untrusted } from "../trust/envelope.ts"
import type { ImageRef, InboundAttachment, UserId } from "../core/types.ts"
import { userWorkspaceDir, workspaceRelative, workspaceUsage } from "../tool/workspace.ts"
import { extensionOf, isModelImage, mediaTypeOf, sizeText } from "./media-types.ts"
import { inboxOn, uploadsOn } from "./inbox.ts"
import { safeFileName } from "./names.ts"

export interface AttachmentsDeps {
  /** The workspace root: a user's files go to their own workspace under it, and the paths shown
   *  to the Teller are relative to that, as the file tools take them. */
  workspaceDir: string
  maxBytes: number
  /** WORKSPACE_MAX_MB in bytes: a file that would overfill the user's workspace is not saved. */
  quotaBytes: number
  /** Images go to the model as images too. */
  vision: boolean
  /** Speech to text; absent when TRANSCRIBE_MODEL is not set. */
  transcribe?: (audio: Uint8Array) => Promise<string>
  /** QUOTA_UPLOADS_PER_DAY for this user; undefined: no limit (an owner). */
  uploadsPerDay: (user: UserId) => number | undefined
  log: Logger
}

/** What became of a message's files. */
export interface TakenFiles {
  /** What the Teller is given: the caption or text (or transcript) and one line per file. "" when nothing is left to hand on. */
  text: string
  images: ImageRef[]
  /** Told to the user: files refused, voice that could not be heard. */
  notices: string[]
}

const AUDIO_KINDS = new Set(["voice", "audio"])

/**
 * Saves the files a user sent into their folder of the workspace, under `inbox/<date>/`, with
 * the original name made safe (a generated one for photos and voice notes), and describes them
 * for the Teller. A file over the size limit is not downloaded; voice and audio are transcribed
 * when a transcription model is set.
 */
export class Attachments {
  constructor(private readonly deps: AttachmentsDeps) {}

  /** `forwardedFrom`: the files were forwarded from someone else; what a recording says is
   *  their words, outside content (trust/envelope.ts), as the forwarded caption is. */
  async take(user: UserId, caption: string, attachments: readonly InboundAttachment[], forwardedFrom?: string): Promise<TakenFiles> {
    const lines: string[] = []
    const transcripts: string[] = []
    const images: ImageRef[] = []
    const notices: string[] = []
    const now = new Date()
    const userDir = userWorkspaceDir(this.deps.workspaceDir, user)
    // Counted from the day's inbox folder: a restart, or another process, counts the same.
    const perDay = this.deps.uploadsPerDay(user)
    let uploadsLeft = perDay === undefined ? Number.POSITIVE_INFINITY : perDay - (await uploadsOn(userDir, now))
    for (const [index, attachment] of attachments.entries()) {
      const name = attachment.name ? safeFileName(attachment.name) : generatedName(attachment, now, index)
      const mediaType = attachment.mimeType?.split(";")[0]?.trim() || mediaTypeOf(name)
      const refused = (why: string, userWhy: string) => {
        lines.push(`Not saved (${why}): ${name} (${mediaType}${attachment.size === undefined ? "" : `, ${sizeText(attachment.size)}`})`)
        notices.push(userWhy)
      }
      if (uploadsLeft <= 0) {
        refused("over the daily upload limit", `I did not save ${name}: you may send ${perDay} files a day (QUOTA_UPLOADS_PER_DAY); send it again tomorrow.`)
        continue
      }
      const limit = `the ${sizeText(this.deps.maxBytes)} limit for files`
      if (attachment.size !== undefined && attachment.size > this.deps.maxBytes) {
        refused("over the size limit", `${name} is ${sizeText(attachment.size)}, over ${limit}, so I did not save it.`)
        continue
      }
      const room = this.deps.quotaBytes - (await usage(userDir))
      const full = `your workspace is full (${sizeText(this.deps.quotaBytes)} allowed), so I did not save ${name}. Files you no longer need can be deleted there.`
      if ((attachment.size ?? 0) > room) {
        refused("the workspace is full", `${name} is ${sizeText(attachment.size!)}, and ${full}`)
        continue
      }
      let bytes: Uint8Array
      try {
        bytes = await attachment.download(Math.min(this.deps.maxBytes, Math.max(room, 0)))
      } catch (error) {
        if (error instanceof FileTooLarge && error.maxBytes < this.deps.maxBytes) refused("the workspace is full", `${name} is too big for what is left: ${full}`)
        else if (error instanceof FileTooLarge) refused("over the size limit", `${name} is over ${limit}, so I did not save it.`)
        else {
          const ref = incident(this.deps.log, error, "could not download a file a user sent", { user, file: name })
          refused("could not be downloaded", `I could not fetch ${name} (reference ${ref}); please send it again.`)
        }
        continue
      }
      const file = await this.save(userDir, now, name, bytes)
      uploadsLeft--
      lines.push(`Saved file: ${workspaceRelative(userDir, file)} (${mediaType}, ${sizeText(bytes.byteLength)})`)
      if (this.deps.vision && isModelImage(mediaType)) images.push({ path: file, mediaType })
      if (AUDIO_KINDS.has(attachment.kind) || mediaType.startsWith("audio/")) {
        const heard = await this.transcribe(bytes, name, notices)
        const words = heard && forwardedFrom !== undefined ? untrusted(`a recording forwarded from ${forwardedFrom}`, heard) : heard
        if (words) transcripts.push(attachments.length > 1 ? `${name}: ${words}` : words)
      }
    }
    const said = [caption.trim(), ...transcripts].filter(Boolean).join("\n\n")
    const saved = lines.some((line) => line.startsWith("Saved file:"))
    // Only refusals and no words: the user has been told; the Teller has nothing to act on.
    const text = said || saved ? [said, lines.join("\n")].filter(Boolean).join("\n\n") : ""
    return { text, images, notices }
  }

  private async transcribe(bytes: Uint8Array, name: string, notices: string[]): Promise<string | undefined> {
    if (!this.deps.transcribe) {
      notices.push(`Voice messages are not set up here (no TRANSCRIBE_MODEL), so I saved ${name} but cannot listen to it.`)
      return undefined
    }
    try {
      return (await this.deps.transcribe(bytes)).trim() || undefined
    } catch (error) {
      notices.push(`I saved ${name} but could not transcribe it (reference ${incident(this.deps.log, error, "could not transcribe a voice message", { file: name })}).`)
      return undefined
    }
  }

  /** Writes the file under the user's dated inbox folder; a name taken already gets -2, -3… */
  private async save(userDir: string, now: Date, name: string, bytes: Uint8Array): Promise<string> {
    const folder = inboxOn(userDir, now)
    await mkdir(folder, { recursive: true })
    const { name: stem, ext } = path.parse(name)
    for (let n = 1; ; n++) {
      const file = path.join(folder, n === 1 ? name : `${stem}-${n}${ext}`)
      // "wx" fails on an existing file instead of replacing what the user sent earlier.
      const handle = await open(file, "wx").catch((error: NodeJS.ErrnoException) => {
        if (error.code === "EEXIST") return undefined
        throw error
      })
      if (!handle) continue
      try {
        await handle.writeFile(bytes)
      } finally {
        await handle.close()
      }
      return file
    }
  }
}

/** `photo-183205.jpg`, `voice-183205-2.ogg`: for files the platform sends without a name. */
function generatedName(attachment: InboundAttachment, now: Date, index: number): string {
  const time = [now.getHours(), now.getMinutes(), now.getSeconds()].map((n) => String(n).padStart(2, "0")).join("")
  return `${attachment.kind.replace("_", "-")}-${time}${index > 0 ? `-${index + 1}` : ""}.${extensionOf(attachment.mimeType ?? (attachment.kind === "photo" ? "image/jpeg" : undefined))}`
}


/** Bytes in a user's workspace; none yet when it does not exist. */
async function usage(userDir: string): Promise<number> {
  return workspaceUsage(userDir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return 0
    throw error
  })
}

