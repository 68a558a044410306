import { join } from "node:path"
import pino from "pino"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { TelegramChannel } from "../../adapters/telegram/telegram.ts"
import { startApp, type App } from "../../src/app.ts"
import { loadConfig } from "../../src/config/config.ts"
import { byRole, startModelServer, type ChatRequest, type ModelServer, type Reply, type Script } from "../fakes/model-server.ts"
import { startTelegramApi, textUpdate, type TelegramApi } from "../fakes/telegram-api.ts"
import { scriptedEnv, telegramEnv, untilWhileRunning, liveAnswerOnRecord } from "../support/e2e.ts"
import { ListMemory } from "../support/harness.ts"
import { StewardProcess } from "../support/process.ts"
import { afterTool } from "../support/scripts.ts"
import { endPlatformTest, platformTest } from "../support/platform-test.ts"

const OWNER = 1001
const ANSWER = "Here is **the answer** you asked for. " + Array.from({ length: 12 }, (_, i) => `Sentence ${i + 1} of a long answer.`).join(" ")
/** The answer as Telegram shows it after the HTML rendering: the bold markers are gone. */
const SHOWN = ANSWER.replace(/\*\*/g, "")

let api: TelegramApi
let server: ModelServer | undefined
let dataDir: string
let app: App | undefined

beforeEach(async () => ({ api, dataDir } = await platformTest(startTelegramApi, "telegram-live")))
afterEach(async () => {
  await endPlatformTest({ api, dataDir }, { app, models: server })
  app = server = undefined
})

const env = (extra: Record<string, string> = {}) => ({ ...scriptedEnv(dataDir, server!.url), ...telegramEnv(api), ALLOWED_USERS: `telegram:${OWNER}`, ...extra })

async function start(script: Script, extra: Record<string, string> = {}): Promise<App> {
  server = await startModelServer(script)
  const config = loadConfig(env(extra))
  const log = pino({ level: process.env.STEWARD_TEST_LOG ?? "silent" }, pino.destination(2))
  app = await startApp(config, log, [new TelegramChannel({ ...config.telegram, botToken: api.token }, log)], new ListMemory())
  return app
}

/** A Teller that answers with `first` (paced), and ends its turn after the reply. */
const answering = (first: Reply): Script => byRole({ teller: (req: ChatRequest) => (afterTool(req) ? { text: "" } : first) })
const replyOf = (text: string, chunks: number, overMs: number): Reply => ({ toolCalls: [{ name: "reply", args: { text } }], pace: { chunks, overMs } })

const botMessages = () => api.sent.filter((message) => message.chat.id === OWNER)
const calls = (method: string) => api.requests.filter((request) => request.method === method)

describe("Telegram live answers (real grammY, fake Bot API, a model that streams)", () => {
  it("shows a reply's text as growing drafts, then sends one final message rendered as always", async () => {
    const steward = await start(answering(replyOf(ANSWER, 20, 2000)))
    api.pushUpdate(textUpdate(OWNER, OWNER, "tell me"))
    await api.waitFor(() => botMessages().length === 1, 30_000)
    await steward.supervisor.idle()
    const drafts = api.drafts.filter((draft) => draft.chatId === OWNER)
    expect(drafts.length).toBeGreaterThanOrEqual(3)
    // One draft per answer, growing: each one the start of the next, all of them the answer's start.
    expect(new Set(drafts.map((draft) => draft.draftId)).size).toBe(1)
    for (const [i, draft] of drafts.entries()) {
      expect(ANSWER.startsWith(draft.text)).toBe(true)
      if (i > 0) expect(draft.text.length).toBeGreaterThan(drafts[i - 1]!.text.length)
    }
    expect(botMessages().map((message) => message.text)).toEqual([SHOWN])
    expect(botMessages()[0]!.entities?.some((entity) => entity.type === "bold")).toBe(true)
    expect(calls("sendMessage")).toHaveLength(1)
    expect(server!.requests.every((request) => request.stream)).toBe(true)
  })

  it("streams an answer given in plain text the same way", async () => {
    const steward = await start(answering({ text: ANSWER, pace: { chunks: 20, overMs: 2000 } }))
    api.pushUpdate(textUpdate(OWNER, OWNER, "tell me"))
    await api.waitFor(() => botMessages().length === 1, 30_000)
    await steward.supervisor.idle()
    expect(api.drafts.length).toBeGreaterThanOrEqual(3)
    expect(botMessages().map((message) => message.text)).toEqual([SHOWN])
  })

  it("falls back to one message edited at most once a second when drafts are refused, ending on the final text", async () => {
    api.failNext("sendMessageDraft", { status: 400, description: "Bad Request: method not available" })
    const steward = await start(answering(replyOf(ANSWER, 30, 3000)))
    api.pushUpdate(textUpdate(OWNER, OWNER, "tell me"))
    await api.waitFor(() => calls("sendMessage").length === 1, 30_000)
    await steward.supervisor.idle()
    expect(calls("sendMessage")).toHaveLength(1)
    const edits = calls("editMessageText")
    expect(edits.length).toBeGreaterThanOrEqual(3)
    // The message's calls reach Telegram a second apart or more, the final edit included.
    const shown = [...calls("sendMessage"), ...edits].sort((a, b) => a.at - b.at)
    for (let i = 1; i < shown.length; i++) expect(shown[i]!.at - shown[i - 1]!.at).toBeGreaterThanOrEqual(1000)
    expect(botMessages().map((message) => message.text)).toEqual([SHOWN])
    expect(edits.at(-1)!.params.parse_mode).toBe("HTML")
  })

  it("streams nothing of a step that calls tools", async () => {
    let step = 0
    const teller: Script = (req) => {
      step++
      if (req.lastUserText.startsWith("<task-results>")) return { toolCalls: [{ name: "reply", args: { text: "All done." } }] }
      if (afterTool(req)) return { text: "" }
      return { text: "Let me look into it. ", toolCalls: [{ name: "list_tasks", args: { scope: "all" } }], pace: { chunks: 10, overMs: 1000 } }
    }
    const steward = await start(byRole({ teller }))
    api.pushUpdate(textUpdate(OWNER, OWNER, "what runs?"))
    await api.waitFor(() => step >= 2, 30_000)
    await steward.supervisor.idle()
    // The step's text came before its tool call: it may have been shown for a moment as a
    // draft, but it never became a message.
    expect(botMessages()).toEqual([])
  })

  it("marks a message sent while an answer is being written with 👀 within a second, and answers it after that answer", async () => {
    const teller: Script = (req) => {
      if (afterTool(req)) return { text: "" }
      if (req.lastUserText.includes("second")) return { toolCalls: [{ name: "reply", args: { text: "answer to second" } }] }
      return replyOf(ANSWER, 30, 3000)
    }
    const steward = await start(byRole({ teller }))
    api.pushUpdate(textUpdate(OWNER, OWNER, "first"))
    await api.waitFor(() => api.drafts.length > 0, 30_000)
    const second = textUpdate(OWNER, OWNER, "second")
    const sentAt = performance.now()
    api.pushUpdate(second)
    const reacted = await api.waitFor(() => calls("setMessageReaction")[0])
    expect(reacted.at - sentAt).toBeLessThan(1000)
    expect(api.reactions.get(`${OWNER}:${second.message!.message_id}`)).toEqual(["👀"])
    // Seen at once, answered after the answer being written.
    expect(botMessages()).toEqual([])
    await api.waitFor(() => botMessages().length === 2, 30_000)
    await steward.supervisor.idle()
    expect(botMessages().map((message) => message.text)).toEqual([SHOWN, "answer to second"])
  })

  it("sends plain final messages and no drafts with STREAM_REPLIES=off", async () => {
    const steward = await start(answering(replyOf(ANSWER, 10, 500)), { STREAM_REPLIES: "off" })
    api.pushUpdate(textUpdate(OWNER, OWNER, "tell me"))
    await api.waitFor(() => botMessages().length === 1, 30_000)
    await steward.supervisor.idle()
    expect(api.drafts).toEqual([])
    expect(server!.requests.every((request) => !request.stream)).toBe(true)
    expect(botMessages().map((message) => message.text)).toEqual([SHOWN])
  })
})

describe("Telegram live answers across a crash", () => {
  let steward: StewardProcess | undefined
  afterEach(async () => {
    await steward?.kill("SIGKILL")
    steward = undefined
  })

  it("deletes the half-written message a SIGKILL left and sends exactly one complete answer after the restart", async () => {
    // Drafts refused throughout: the answer grows as a message.
    for (let i = 0; i < 20; i++) api.failNext("sendMessageDraft", { status: 400, description: "Bad Request: method not available" })
    let release!: () => void
    const hold = new Promise((resolve) => (release = resolve as () => void))
    let tellerCalls = 0
    server = await startModelServer(
      byRole({
        teller: (req) => {
          if (afterTool(req)) return { text: "" }
          tellerCalls++
          return { toolCalls: [{ name: "reply", args: { text: ANSWER } }], pace: tellerCalls === 1 ? { chunks: 20, overMs: 2000, holdAfter: 8, hold } : { chunks: 4, overMs: 200 } }
        },
      }),
    )
    steward = StewardProcess.start(env())
    api.pushUpdate(textUpdate(OWNER, OWNER, "tell me"))
    const half = await untilWhileRunning(steward, "the half-written message", () => botMessages()[0], 40_000)
    expect(ANSWER.startsWith(half.text!) && half.text!.length < ANSWER.length).toBe(true)
    await liveAnswerOnRecord(dataDir, "telegram")
    expect(await steward.kill("SIGKILL")).toBe(null)
    release()

    steward = StewardProcess.start(env())
    await untilWhileRunning(steward, "the complete answer", () => botMessages().some((message) => message.text === SHOWN), 40_000)
    await untilWhileRunning(steward, "the half-written message deleted", () => !botMessages().some((message) => message.message_id === half.message_id), 40_000)
    expect(botMessages().map((message) => message.text)).toEqual([SHOWN])
    expect(await steward.kill("SIGTERM")).toBe(0)
  }, 120_000)
})
