import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import pino from "pino"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { TelegramChannel } from "../../adapters/telegram/telegram.ts"
import { startApp, type App } from "../../src/app.ts"
import { loadConfig } from "../../src/config/config.ts"
import { startModelServer, type ModelServer, type Script } from "../fakes/model-server.ts"
import { fileUpdate, startTelegramApi, type TelegramApi } from "../fakes/telegram-api.ts"
import { echoing, firstTellerText, imagesSent, JPEG, OGG, readingWorker, sendingFiles } from "../support/files.ts"
import { scriptedEnv, telegramEnv } from "../support/e2e.ts"
import { ListMemory } from "../support/harness.ts"
import { endPlatformTest, platformTest } from "../support/platform-test.ts"

const OWNER = 1001
/** The owner's own workspace under DATA_DIR/workspace. */
const USER_FOLDER = "telegram-1001"
const INBOX = /Saved file: (inbox\/\d{4}-\d{2}-\d{2}\/\S+) \(([^,]+), ([^)]+)\)/

let api: TelegramApi
let server: ModelServer | undefined
let dataDir: string
let app: App | undefined

beforeEach(async () => ({ api, dataDir } = await platformTest(startTelegramApi, "telegram-files")))
afterEach(async () => {
  await endPlatformTest({ api, dataDir }, { app, models: server })
  app = server = undefined
})

async function start(script: Script, extra: Record<string, string> = {}): Promise<App> {
  server = await startModelServer(script)
  const config = loadConfig({
    ...scriptedEnv(dataDir, server.url),
    ALLOWED_USERS: `telegram:${OWNER}`,
    ...telegramEnv(api),
    ...extra,
  })
  const log = pino({ level: process.env.STEWARD_TEST_LOG ?? "silent" }, pino.destination(2))
  app = await startApp(config, log, [new TelegramChannel({ ...config.telegram, botToken: api.token }, log)], new ListMemory())
  return app
}

const textsTo = (chat: number) => api.sent.filter((message) => message.chat.id === chat && message.text !== undefined && !message.text.startsWith("⚙️")).map((message) => message.text!)
const replies = (count: number) => api.waitFor(() => (textsTo(OWNER).length >= count ? textsTo(OWNER) : undefined), 10_000)

describe("files in and out of a Telegram chat (real grammY, fake Bot API, scripted model)", () => {
  it("saves the largest size of a photo in the user's inbox and shows it to the model as an image", async () => {
    const steward = await start(echoing, { VISION: "on" })
    const small = api.addFile("thumbnail")
    const large = api.addFile(JPEG)
    api.pushUpdate(fileUpdate(OWNER, OWNER, { photo: [{ ...small, width: 90, height: 90 }, { ...large, width: 1280, height: 960 }] }, "what is this?"))
    const [reply] = await replies(1)
    await steward.supervisor.idle()
    expect(reply).toContain("what is this?")
    const [, path, type] = INBOX.exec(reply)!
    expect(path).toMatch(/\/photo-\d{6}\.jpg$/)
    expect(type).toBe("image/jpeg")
    expect(readFileSync(join(dataDir, "workspace", USER_FOLDER, path))).toEqual(JPEG)
    // Only the largest size was fetched.
    expect(api.downloads).toHaveLength(1)
    expect(imagesSent(server!)).toContain(`data:image/jpeg;base64,${JPEG.toString("base64")}`)
  })

  it("gives the model no image parts when VISION is off (the default for openai-compatible)", async () => {
    const steward = await start(echoing)
    api.pushUpdate(fileUpdate(OWNER, OWNER, { photo: [{ ...api.addFile(JPEG), width: 10, height: 10 }] }))
    const [reply] = await replies(1)
    await steward.supervisor.idle()
    expect(reply).toMatch(INBOX)
    expect(imagesSent(server!)).toEqual([])
  })

  it("lets a Worker read a text document the user sent", async () => {
    const steward = await start(readingWorker)
    const file = api.addFile("The meeting is on Tuesday.\n")
    api.pushUpdate(fileUpdate(OWNER, OWNER, { document: { ...file, file_name: "../notes.txt", mime_type: "text/plain" } }, "When is the meeting?"))
    const [reply] = await replies(1)
    await steward.supervisor.idle()
    expect(reply).toContain("From your file: The meeting is on Tuesday.")
    // The name keeps no path: the file lands in the inbox, not beside it.
    expect(firstTellerText(server!)).toMatch(/Saved file: inbox\/[\d-]+\/notes\.txt \(text\/plain, 27 B\)/)
  })

  it("sends workspace files back: a document with its caption, a picture as a photo, each once", async () => {
    const steward = await start(sendingFiles("report.csv", "charts/chart.png"))
    mkdirSync(join(dataDir, "workspace", USER_FOLDER, "charts"), { recursive: true })
    writeFileSync(join(dataDir, "workspace", USER_FOLDER, "report.csv"), "a,b\n1,2\n")
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47]), Buffer.from("png")])
    writeFileSync(join(dataDir, "workspace", USER_FOLDER, "charts", "chart.png"), png)
    api.pushUpdate(fileUpdate(OWNER, OWNER, { text: "send me the report" }))
    await api.waitFor(() => api.uploads.length >= 2)
    await steward.supervisor.idle()
    expect(api.uploads.map(({ method, filename, data, caption }) => ({ method, filename, data: data.toString("latin1"), caption }))).toEqual([
      { method: "sendDocument", filename: "report.csv", data: "a,b\n1,2\n", caption: "Here is the <b>report</b>" },
      { method: "sendPhoto", filename: "chart.png", data: png.toString("latin1"), caption: undefined },
    ])
    expect(api.requests.some((request) => request.method === "sendChatAction" && request.params.action === "upload_document")).toBe(true)
  })

  it("sends an image Telegram refuses as a photo as a document instead", async () => {
    const steward = await start(sendingFiles("report.csv", "chart.png"))
    mkdirSync(join(dataDir, "workspace", USER_FOLDER), { recursive: true })
    writeFileSync(join(dataDir, "workspace", USER_FOLDER, "report.csv"), "r")
    writeFileSync(join(dataDir, "workspace", USER_FOLDER, "chart.png"), "p")
    api.failNext("sendPhoto", { status: 400, description: "Bad Request: PHOTO_INVALID_DIMENSIONS" })
    api.pushUpdate(fileUpdate(OWNER, OWNER, { text: "send me the report" }))
    await api.waitFor(() => api.uploads.length >= 2)
    await steward.supervisor.idle()
    expect(api.uploads.map((upload) => [upload.method, upload.filename])).toEqual([
      ["sendDocument", "report.csv"],
      ["sendDocument", "chart.png"],
    ])
  })

  it("refuses a file over MAX_ATTACHMENT_MB without downloading it, and says so", async () => {
    const steward = await start(echoing, { MAX_ATTACHMENT_MB: "1" })
    const big = api.addFile("x", 2 * 1024 * 1024)
    api.pushUpdate(fileUpdate(OWNER, OWNER, { document: { ...big, file_name: "huge.zip", mime_type: "application/zip" } }))
    const [reply] = await replies(1)
    await steward.supervisor.idle()
    expect(reply).toBe("huge.zip is 2.0 MB, over the 1.0 MB limit for files, so I did not save it.")
    expect(api.requests.some((request) => request.method === "getFile")).toBe(false)
    expect(server!.requests).toEqual([])
    expect(readdirSync(dataDir)).not.toContain("workspace")
  })

  it("transcribes a voice note with TRANSCRIBE_MODEL and keeps the recording", async () => {
    const steward = await start(echoing, { TRANSCRIBE_MODEL: "openai-compatible:whisper-1" })
    api.pushUpdate(fileUpdate(OWNER, OWNER, { voice: { ...api.addFile(OGG), duration: 2, mime_type: "audio/ogg" } }))
    const [reply] = await replies(1)
    await steward.supervisor.idle()
    expect(server!.transcriptions.map(({ model, audio }) => ({ model, audio }))).toEqual([{ model: "whisper-1", audio: OGG }])
    expect(reply).toMatch(/^Got: transcript of 64 bytes\n\nSaved file: inbox\/[\d-]+\/voice-\d{6}\.ogg \(audio\/ogg, 64 B\)$/)
  })

  it("tells the user voice is not set up without TRANSCRIBE_MODEL, and still hands the file on", async () => {
    const steward = await start(echoing)
    api.pushUpdate(fileUpdate(OWNER, OWNER, { voice: { ...api.addFile(OGG), duration: 2, mime_type: "audio/ogg" } }))
    const texts = await replies(2)
    await steward.supervisor.idle()
    expect(texts).toContainEqual(expect.stringMatching(/^Voice messages are not set up here \(no TRANSCRIBE_MODEL\), so I saved voice-\d{6}\.ogg but cannot listen to it\.$/))
    expect(texts).toContainEqual(expect.stringMatching(/^Got: Saved file: inbox\/[\d-]+\/voice-\d{6}\.ogg/))
    expect(server!.transcriptions).toEqual([])
  })
})
