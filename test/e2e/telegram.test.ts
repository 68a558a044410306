import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Message } from "grammy/types"
import pino from "pino"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { TelegramChannel } from "../../adapters/telegram/telegram.ts"
import { startApp, type App } from "../../src/app.ts"
import { loadConfig } from "../../src/config/config.ts"
import { byRole, startModelServer, type ModelServer, type Script } from "../fakes/model-server.ts"
import { callbackUpdate, MESSAGE_LIMIT, startTelegramApi, textUpdate, type TelegramApi } from "../fakes/telegram-api.ts"
import { asking, delegating, hangingOnce, replying, untilWhileRunning, writingWorker } from "../support/e2e.ts"
import { ListMemory } from "../support/harness.ts"
import { StewardProcess } from "../support/process.ts"
import { afterTool } from "../support/scripts.ts"
import { Store } from "../../src/store/store.ts"

const OWNER = 1001
const STRANGER = 9999

/** What Steward shows in a chat now, status messages left out. */
const repliesIn = (api: TelegramApi, chat: number) => api.sent.filter((message) => message.chat.id === chat && !message.text?.startsWith("⚙️"))
const textsIn = (api: TelegramApi, chat: number) => repliesIn(api, chat).map((message) => message.text)

let api: TelegramApi
let server: ModelServer | undefined
let dataDir: string

beforeEach(async () => {
  api = await startTelegramApi()
  dataDir = mkdtempSync(join(tmpdir(), "steward-telegram-e2e-"))
})

afterEach(async () => {
  await server?.close()
  server = undefined
  await api.close()
  rmSync(dataDir, { recursive: true, force: true })
})

const env = () => ({
  DATA_DIR: dataDir,
  MODEL: "openai-compatible:scripted",
  OPENAI_COMPATIBLE_BASE_URL: server!.url,
  MODEL_MAX_RETRIES: "1",
  ALLOWED_USERS: `telegram:${OWNER}`,
  TELEGRAM_BOT_TOKEN: api.token,
  TELEGRAM_API_ROOT: api.apiRoot,
})

describe("Telegram end to end (Steward in process, real grammY, fake Bot API, scripted model over HTTP)", () => {
  let app: App | undefined

  afterEach(async () => {
    await app?.stop()
    app = undefined
  })

  async function start(script: Script): Promise<App> {
    server = await startModelServer(script)
    const config = loadConfig(env())
    const log = pino({ level: process.env.STEWARD_TEST_LOG ?? "silent" }, pino.destination(2))
    const channel = new TelegramChannel({ ...config.telegram, botToken: api.token }, log, { progressEditIntervalMs: 100, statusAfterMs: 0 })
    app = await startApp(config, log, [channel], new ListMemory())
    return app
  }

  /** Resolves with the chat's replies once there are `count` of them. */
  const replies = (count: number, chat = OWNER, timeoutMs = 10_000) => api.waitFor(() => (repliesIn(api, chat).length >= count ? repliesIn(api, chat) : undefined), timeoutMs)

  it("answers hello, shows typing meanwhile and lists the commands", async () => {
    const steward = await start(byRole({ teller: replying("Hello! How can I help?") }))
    api.pushUpdate(textUpdate(OWNER, OWNER, "hello"))
    expect((await replies(1)).map((message) => message.text)).toEqual(["Hello! How can I help?"])
    await steward.supervisor.idle()
    // The Supervisor reports the turn as activity; the adapter turns it into "typing…".
    expect(api.requests.some((request) => request.method === "sendChatAction" && Number(request.params.chat_id) === OWNER)).toBe(true)
    expect(api.commands.map((command) => command.command)).toContain("tasks")
  })

  it("runs a delegate round trip with one status message, posted with a Stop button and ended saying it is done", async () => {
    const steward = await start(delegating(writingWorker))
    api.pushUpdate(textUpdate(OWNER, OWNER, "cats"))
    await replies(2)
    await steward.supervisor.idle()
    expect(textsIn(api, OWNER)).toEqual(["On it.", "Done: Saved notes/cats.md"])
    const posted = api.requests.filter((request) => request.method === "sendMessage" && String(request.params.text).startsWith("⚙️ Write a note about: cats"))
    expect(posted).toHaveLength(1)
    expect(JSON.stringify(posted[0]!.params.reply_markup)).toContain("Stop")
    const ended = await api.waitFor(() => api.sent.find((message) => message.text?.startsWith("⚙️") && message.text.includes("Done after")))
    expect(ended.reply_markup).toBeUndefined()
  })

  it("answers an update delivered twice once", async () => {
    const steward = await start(byRole({ teller: replying("Only once.") }))
    const update = textUpdate(OWNER, OWNER, "hello")
    // Pushed together, both copies come in one getUpdates batch, as after a lost confirmation.
    api.pushUpdate(update)
    api.pushUpdate(update)
    await replies(1)
    await steward.supervisor.idle()
    await api.waitFor(() => api.requests.filter((request) => request.method === "getUpdates").some((request) => Number(request.params.offset) > update.update_id))
    expect(textsIn(api, OWNER)).toEqual(["Only once."])
    expect(server!.requests.filter((request) => request.role === "teller")).toHaveLength(1) // the reply ends the turn: no step after it
  })

  it("never lets a stranger reach a model", async () => {
    const steward = await start(byRole({ teller: replying("secret") }))
    api.pushUpdate(textUpdate(STRANGER, STRANGER, "let me in"))
    // The stranger is told how to be approved (a pairing code), by Steward itself.
    await replies(1, STRANGER)
    await steward.supervisor.idle()
    expect(server!.requests).toEqual([])
    expect(textsIn(api, STRANGER).join()).not.toContain("secret")
  })

  it("sends a reply once after a 429", async () => {
    const steward = await start(byRole({ teller: replying("Rate limits are fine.") }))
    api.failNext("sendMessage", { status: 429, retry_after: 1 })
    api.pushUpdate(textUpdate(OWNER, OWNER, "hello"))
    expect((await replies(1)).map((message) => message.text)).toEqual(["Rate limits are fine."])
    await steward.supervisor.idle()
    expect(api.requests.filter((request) => request.method === "sendMessage" && request.params.text === "Rate limits are fine.")).toHaveLength(2)
  })

  it("delivers a 10,000-character reply complete, in order, every message within Telegram's 4096, none sent twice", async () => {
    // Markup and characters HTML must escape, so the split goes through the real rendering.
    const paragraphs = Array.from({ length: 90 }, (_, n) => `Paragraph ${n}: **bold** and _italic_, a < b & c > d, ${"word ".repeat(13)}`.trim())
    const markdown = paragraphs.join("\n\n")
    expect(markdown.length).toBeGreaterThanOrEqual(10_000)
    const steward = await start(byRole({ teller: replying(markdown) }))
    api.pushUpdate(textUpdate(OWNER, OWNER, "tell me everything"))
    await api.waitFor(() => textsIn(api, OWNER).join("\n\n").includes("Paragraph 89: "))
    await steward.supervisor.idle()
    const parts = repliesIn(api, OWNER)
    expect(parts.length).toBeGreaterThanOrEqual(3)
    for (const part of parts) expect(part.text!.length).toBeLessThanOrEqual(MESSAGE_LIMIT)
    const normalize = (text: string) => text.replace(/\s+/g, " ").trim()
    expect(normalize(parts.map((part) => part.text).join("\n\n"))).toBe(normalize(markdown.replace(/\*\*|_/g, "")))
    // Rendered as HTML: the bold survives as entities, the escaped characters as text.
    expect(parts.every((part) => part.entities?.some((entity) => entity.type === "bold"))).toBe(true)
    // Every sendMessage got through the first time: one request per part, no part repeated.
    const sends = api.requests.filter((request) => request.method === "sendMessage" && !String(request.params.text).startsWith("⚙️"))
    expect(sends).toHaveLength(parts.length)
    expect(new Set(parts.map((part) => part.text)).size).toBe(parts.length)
    expect(parts.map((part) => part.message_id)).toEqual(parts.map((part) => part.message_id).sort((a, b) => a - b))
  })

  describe("ask_user", () => {
    const question = () => api.waitFor(() => api.sent.find((message) => message.text?.startsWith("Which colour?")))
    const edited = (message: Message) => api.waitFor(() => api.sent.find((m) => m.message_id === message.message_id && m.edit_date !== undefined))

    it("is answered by a button: the press is answered, the question edited without buttons, the Teller resumed", async () => {
      const steward = await start(asking(3600))
      api.pushUpdate(textUpdate(OWNER, OWNER, "paint the fence"))
      const asked = await question()
      const buttons = asked.reply_markup?.inline_keyboard.flat() ?? []
      expect(buttons.map((button) => button.text)).toEqual(["Red", "Blue"])
      const blue = buttons[1]!
      const press = callbackUpdate(OWNER, OWNER, asked.message_id, "callback_data" in blue ? blue.callback_data : "")
      api.pushUpdate(press)
      await api.waitFor(() => textsIn(api, OWNER).includes('got {"answer":"Blue","source":"user"}'))
      expect(api.callbackAnswers.map((answer) => answer.callback_query_id)).toEqual([press.callback_query!.id])
      const closed = await edited(asked)
      expect(closed.text).toBe("Which colour?\n\nAnswer: Blue")
      expect(closed.reply_markup).toBeUndefined()
      await steward.supervisor.idle()
    })

    it("expires with its default: the question edited to say so, the Teller resumed with the default", async () => {
      const steward = await start(asking(1))
      api.pushUpdate(textUpdate(OWNER, OWNER, "paint the fence"))
      const asked = await question()
      const closed = await edited(asked)
      expect(closed.text).toBe("Which colour?\n\nNo answer — used default: Red")
      expect(closed.reply_markup).toBeUndefined()
      await api.waitFor(() => textsIn(api, OWNER).includes('got {"answer":"Red","source":"default"}'))
      await steward.supervisor.idle()
    })
  })
})

describe("Telegram end to end (the real program)", () => {
  let steward: StewardProcess | undefined

  afterEach(async () => {
    if (steward && steward.child.exitCode === null) await steward.kill()
    steward = undefined
  })

  it("deletes a status message a SIGKILL left behind when it starts again", async () => {
    let workerCalls = 0
    const worker: Script = (req) => {
      workerCalls++
      if (afterTool(req) && workerCalls > 2) return { text: "Saved notes/after-crash.md" }
      // First run: a tool call (so a status message is shown), then a hang until the process dies.
      return workerCalls === 1 ? { toolCalls: [{ name: "write_file", args: { path: "notes/after-crash.md", content: "ok" } }] } : { hang: true }
    }
    server = await startModelServer(delegating(worker))
    steward = StewardProcess.start(env())
    api.pushUpdate(textUpdate(OWNER, OWNER, "crash test"))
    await untilWhileRunning(steward, "the hang after the tool call", () => workerCalls === 2)
    const status = await untilWhileRunning(steward, "the work's status message", () => api.sent.find((message) => message.text?.startsWith("⚙️ Write a note about: crash test")))
    // The message is remembered durably once it is shown; read that from the data folder.
    const store = await Store.open(dataDir)
    try {
      const recorded = async () => (await store.channelState("telegram").list("status/")).length === 1
      for (const deadline = Date.now() + 10_000; !(await recorded()); await new Promise((resolve) => setTimeout(resolve, 20))) {
        if (Date.now() > deadline) throw new Error("the status message was never put on record")
      }
    } finally {
      await store.close()
    }
    expect(await steward.kill("SIGKILL")).toBe(null)

    steward = StewardProcess.start(env())
    await untilWhileRunning(steward, "the final reply after the restart", () => textsIn(api, OWNER).includes("Done: Saved notes/after-crash.md"))
    await untilWhileRunning(steward, "the old status message deleted", () => !api.sent.some((message) => message.message_id === status.message_id))
    // What is left is the status of the run after the restart, ended: no button to press.
    for (const left of api.sent.filter((message) => message.text?.startsWith("⚙️"))) expect(left.reply_markup).toBeUndefined()
    expect(await steward.kill("SIGTERM")).toBe(0)
  }, 60_000)

  it("survives SIGKILL during a Worker task: after a restart on the same DATA_DIR exactly one final reply arrives", async () => {
    const hanging = hangingOnce()
    const script = delegating(hanging.worker)
    server = await startModelServer(script)
    steward = StewardProcess.start(env())
    api.pushUpdate(textUpdate(OWNER, OWNER, "crash test"))
    await untilWhileRunning(steward, "the acknowledgement", () => textsIn(api, OWNER).includes("On it."))
    await untilWhileRunning(steward, "the worker's first run", () => hanging.calls() === 1)
    expect(await steward.kill("SIGKILL")).toBe(null)

    steward = StewardProcess.start(env())
    await untilWhileRunning(steward, "the final reply after the restart", () => textsIn(api, OWNER).includes("Done: Saved notes/after-crash.md"))
    expect(await steward.kill("SIGTERM")).toBe(0)
    const sentReplies = api.requests.filter((request) => request.method === "sendMessage" && !String(request.params.text).startsWith("⚙️")).map((request) => request.params.text)
    expect(sentReplies).toEqual(["On it.", "Done: Saved notes/after-crash.md"])
    expect(hanging.calls()).toBe(2)
  }, 60_000)
})
