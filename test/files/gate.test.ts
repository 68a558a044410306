import { readdirSync } from "node:fs"
import { join } from "node:path"
import type { Message } from "grammy/types"
import { afterEach, describe, expect, it } from "vitest"
import { inboundOfMessage } from "../../adapters/telegram/updates.ts"
import type { InboundAttachment } from "../../src/core/types.ts"
import { byRole } from "../fakes/model-server.ts"
import { startHarness, type Harness } from "../support/harness.ts"
import { afterTool, say } from "../support/scripts.ts"

let harness: Harness | undefined
afterEach(async () => {
  await harness?.close()
  harness = undefined
})

const echo = byRole({ teller: (req) => (afterTool(req) ? { text: "" } : say(`Got: ${req.lastUserText}`)) })
const note = (downloads: { count: number }): InboundAttachment => ({
  kind: "document",
  name: "plan.txt",
  mimeType: "text/plain",
  download: async () => {
    downloads.count++
    return Buffer.from("the plan")
  },
})

describe("the gate with files", () => {
  it("takes a caption that looks like a command as the files' message, so the files are not lost", async () => {
    harness = await startHarness(echo)
    await harness.channel.say("/tasks", "test:c1", "test:u1", { attachments: [note({ count: 0 })], eventId: "test:1" })
    const [reply] = await harness.channel.waitForSent(1)
    expect(reply!.text).toMatch(/^Got: \/tasks\n\nSaved file: inbox\/[\d-]+\/plan\.txt \(text\/plain, 8 B\)$/)
  })

  it("saves the files of a platform event delivered twice once", async () => {
    harness = await startHarness(echo)
    const downloads = { count: 0 }
    const message = { attachments: [note(downloads)], eventId: "test:2" }
    await Promise.all([harness.channel.say("see", "test:c1", "test:u1", message), harness.channel.say("see", "test:c1", "test:u1", message)])
    await harness.channel.say("see", "test:c1", "test:u1", message)
    await harness.channel.waitForSent(1)
    await harness.app.supervisor.idle()
    expect(downloads.count).toBe(1)
    const [day] = readdirSync(join(harness.dataDir, "workspace", "test-u1", "inbox"))
    expect(readdirSync(join(harness.dataDir, "workspace", "test-u1", "inbox", day!))).toEqual(["plan.txt"])
    expect(harness.channel.sent).toHaveLength(1)
  })
})

describe("Telegram messages with files", () => {
  const from = { id: 7, is_bot: false, first_name: "A" }
  const base = { message_id: 1, date: 0, chat: { id: 7, type: "private" as const, first_name: "A" }, from }
  const fetchFile = async () => new Uint8Array()
  const kinds = (content: object) => inboundOfMessage(1, { ...base, ...content } as Message, "bot", fetchFile)?.attachments?.map((a) => [a.kind, a.name, a.mimeType, a.size])

  it("describes audio, video, video notes and documents; the caption is the text; a sticker is not taken", () => {
    const file = { file_id: "f", file_unique_id: "u", file_size: 5 }
    expect(kinds({ audio: { ...file, duration: 1, file_name: "song.mp3", mime_type: "audio/mpeg" } })).toEqual([["audio", "song.mp3", "audio/mpeg", 5]])
    expect(kinds({ video: { ...file, duration: 1, width: 1, height: 1, mime_type: "video/mp4" } })).toEqual([["video", undefined, "video/mp4", 5]])
    expect(kinds({ video_note: { ...file, duration: 1, length: 1 } })).toEqual([["video_note", undefined, "video/mp4", 5]])
    expect(inboundOfMessage(1, { ...base, document: { ...file, file_name: "a.pdf" }, caption: "read" } as Message, "bot", fetchFile)?.text).toBe("read")
    expect(inboundOfMessage(1, { ...base, sticker: { ...file, type: "regular", width: 1, height: 1, is_animated: false, is_video: false } } as Message, "bot", fetchFile)).toBeUndefined()
  })

  it("says who wrote a forwarded message: the user passed it on, its words are someone else's", () => {
    const forward = (forward_origin: object) => inboundOfMessage(1, { ...base, text: "call remember", forward_origin } as Message, "bot", fetchFile)
    expect(forward({ type: "user", date: 0, sender_user: { id: 9, is_bot: false, first_name: "Mal", last_name: "Lory", username: "mal" } })?.forwardedFrom).toBe("Mal Lory (@mal)")
    expect(forward({ type: "hidden_user", date: 0, sender_user_name: "Someone" })?.forwardedFrom).toBe("Someone")
    expect(forward({ type: "channel", date: 0, chat: { id: -1, type: "channel", title: "News" }, message_id: 3 })?.forwardedFrom).toBe("News")
    expect(inboundOfMessage(1, { ...base, text: "mine" } as Message, "bot", fetchFile)?.forwardedFrom).toBeUndefined()
  })
})
