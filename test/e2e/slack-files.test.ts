import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import pino from "pino"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { SlackChannel } from "../../adapters/slack/slack.ts"
import { startApp, type App } from "../../src/app.ts"
import { loadConfig } from "../../src/config/config.ts"
import { startModelServer, type ModelServer, type Script } from "../fakes/model-server.ts"
import { eventCallback, EventSender, fileShareEvent, mentionEvent, startSlackApi, type SlackApi, type SlackFile } from "../fakes/slack-api.ts"
import { echoing, firstTellerText, imagesSent, JPEG, OGG, readingWorker, sendingFiles } from "../support/files.ts"
import { scriptedEnv, slackEnv } from "../support/e2e.ts"
import { ListMemory } from "../support/harness.ts"
import { endPlatformTest, platformTest } from "../support/platform-test.ts"

const OWNER = "U0OWNER"
const OWNER_DM = "D0OWNER"
/** The owner's own workspace under DATA_DIR/workspace. */
const USER_FOLDER = "slack-U0OWNER"
const INBOX = /Saved file: (inbox\/\d{4}-\d{2}-\d{2}\/\S+) \(([^,]+), ([^)]+)\)/

let api: SlackApi
let server: ModelServer | undefined
let dataDir: string
let app: App | undefined
let sender: EventSender

beforeEach(async () => ({ api, dataDir } = await platformTest(startSlackApi, "slack-files")))
afterEach(async () => {
  await endPlatformTest({ api, dataDir }, { app, models: server })
  app = server = undefined
})

async function start(script: Script, extra: Record<string, string> = {}): Promise<App> {
  server = await startModelServer(script)
  const config = loadConfig({
    ...scriptedEnv(dataDir, server.url),
    ALLOWED_USERS: `slack:${OWNER}`,
    ...slackEnv(api),
    ...extra,
  })
  const log = pino({ level: process.env.STEWARD_TEST_LOG ?? "silent" }, pino.destination(2))
  const channel = new SlackChannel({ ...config.slack, botToken: api.botToken }, log, { host: "127.0.0.1", port: 0, retryConfig: { retries: 1, minTimeout: 0, maxTimeout: 1 } })
  app = await startApp(config, log, [channel], new ListMemory())
  sender = new EventSender(`http://127.0.0.1:${channel.httpPort}/slack/events`, api.signingSecret)
  return app
}

const share = (text: string, files: SlackFile[]) => sender.event(eventCallback(api.team, fileShareEvent(OWNER, OWNER_DM, text, files)))
const textsIn = (channel: string) => api.messages.filter((message) => message.channel === channel && !message.text.startsWith("⚙️")).map((message) => message.text)
const replies = (count: number) => api.waitFor(() => (textsIn(OWNER_DM).length >= count ? textsIn(OWNER_DM) : undefined), 10_000)

describe("files in and out of a Slack DM (real Bolt over HTTP, fake Web API, scripted model)", () => {
  it("downloads a shared image with the bot token into the user's inbox and shows it to the model", async () => {
    const steward = await start(echoing, { VISION: "on" })
    await share("what is this?", [api.hostFile("cat.jpg", "image/jpeg", JPEG)])
    const [reply] = await replies(1)
    await steward.supervisor.idle()
    const [, path, type] = INBOX.exec(reply)!
    expect([path.split("/").at(-1), type]).toEqual(["cat.jpg", "image/jpeg"])
    expect(readFileSync(join(dataDir, "workspace", USER_FOLDER, path))).toEqual(JPEG)
    expect(api.downloads.map((download) => download.token)).toEqual([api.botToken])
    expect(imagesSent(server!)).toContain(`data:image/jpeg;base64,${JPEG.toString("base64")}`)
  })

  it("lets a Worker read a text document shared without a message", async () => {
    const steward = await start(readingWorker)
    await share("", [api.hostFile("minutes.md", "text/markdown", "The meeting is on Tuesday.\n")])
    const [reply] = await replies(1)
    await steward.supervisor.idle()
    expect(reply).toContain("From your file: The meeting is on Tuesday.")
    expect(firstTellerText(server!)).toMatch(/^Saved file: inbox\/[\d-]+\/minutes\.md \(text\/markdown, 27 B\)$/)
  })

  it("uploads workspace files into the DM with files.uploadV2, each once, the caption as its comment", async () => {
    const steward = await start(sendingFiles("report.csv", "charts/chart.png"))
    mkdirSync(join(dataDir, "workspace", USER_FOLDER, "charts"), { recursive: true })
    writeFileSync(join(dataDir, "workspace", USER_FOLDER, "report.csv"), "a,b\n1,2\n")
    writeFileSync(join(dataDir, "workspace", USER_FOLDER, "charts", "chart.png"), "png bytes")
    await sender.event(eventCallback(api.team, fileShareEvent(OWNER, OWNER_DM, "send me the report", [])))
    await api.waitFor(() => api.uploads.length >= 2)
    await steward.supervisor.idle()
    expect(api.uploads.map(({ filename, data, channel, thread_ts, initial_comment }) => ({ filename, data: data.toString(), channel, thread_ts, initial_comment }))).toEqual([
      { filename: "report.csv", data: "a,b\n1,2\n", channel: OWNER_DM, thread_ts: undefined, initial_comment: "Here is the **report**" },
      { filename: "chart.png", data: "png bytes", channel: OWNER_DM, thread_ts: undefined, initial_comment: undefined },
    ])
    expect(api.calls.filter((call) => call.method === "files.getUploadURLExternal")).toHaveLength(2)
  })

  it("uploads into the thread of a channel conversation", async () => {
    const steward = await start(sendingFiles("report.csv", "chart.png"))
    mkdirSync(join(dataDir, "workspace", USER_FOLDER), { recursive: true })
    writeFileSync(join(dataDir, "workspace", USER_FOLDER, "report.csv"), "r")
    writeFileSync(join(dataDir, "workspace", USER_FOLDER, "chart.png"), "p")
    const mention = mentionEvent(OWNER, "C0GENERAL", "send the report")
    await sender.event(eventCallback(api.team, mention))
    await api.waitFor(() => api.uploads.length >= 2)
    await steward.supervisor.idle()
    expect(api.uploads.map((upload) => [upload.channel, upload.thread_ts])).toEqual([
      ["C0GENERAL", mention.ts],
      ["C0GENERAL", mention.ts],
    ])
  })

  it("refuses a file over MAX_ATTACHMENT_MB without downloading it, and says so", async () => {
    const steward = await start(echoing, { MAX_ATTACHMENT_MB: "1" })
    await share("", [api.hostFile("huge.zip", "application/zip", "x", 3 * 1024 * 1024)])
    const [reply] = await replies(1)
    await steward.supervisor.idle()
    expect(reply).toBe("huge.zip is 3.0 MB, over the 1.0 MB limit for files, so I did not save it.")
    expect(api.downloads).toEqual([])
    expect(server!.requests).toEqual([])
    expect(readdirSync(dataDir)).not.toContain("workspace")
  })

  it("transcribes shared audio with TRANSCRIBE_MODEL (same provider settings) and keeps the file", async () => {
    const steward = await start(echoing, { TRANSCRIBE_MODEL: "openai-compatible:whisper-1" })
    await share("", [api.hostFile("audio_message.ogg", "audio/ogg", OGG)])
    const [reply] = await replies(1)
    await steward.supervisor.idle()
    expect(server!.transcriptions.map(({ model, audio }) => ({ model, audio }))).toEqual([{ model: "whisper-1", audio: OGG }])
    expect(reply).toMatch(/^Got: transcript of 64 bytes\n\nSaved file: inbox\/[\d-]+\/audio_message\.ogg \(audio\/ogg, 64 B\)$/)
  })
})
