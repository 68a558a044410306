import pino from "pino"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { TelegramChannel } from "../../adapters/telegram/telegram.ts"
import { startApp, type App } from "../../src/app.ts"
import { loadConfig } from "../../src/config/config.ts"
import { byRole, startModelServer, type ModelServer, type Script } from "../fakes/model-server.ts"
import { fileUpdate, startTelegramApi, textUpdate, type TelegramApi } from "../fakes/telegram-api.ts"
import { docxBombs, pdfBomb } from "../files/bombs.ts"
import { scriptedEnv, telegramEnv } from "../support/e2e.ts"
import { ListMemory } from "../support/harness.ts"
import { afterTool, say } from "../support/scripts.ts"
import { endPlatformTest, platformTest } from "../support/platform-test.ts"

const OWNER = 1001
const UPLOADER = 2002

let api: TelegramApi
let server: ModelServer | undefined
let dataDir: string
let app: App | undefined

beforeEach(async () => ({ api, dataDir } = await platformTest(startTelegramApi, "untrusted")))
afterEach(async () => {
  await endPlatformTest({ api, dataDir }, { app, models: server })
  app = server = undefined
})

/** The Teller answers plain messages at once and delegates a file to a Worker that reads it;
 *  what the Worker got (its text, or the refusal) is relayed to the uploader. */
const script: Script = byRole({
  teller: (req) => {
    if (afterTool(req)) return { text: "" }
    if (req.lastUserText.startsWith("<task-results>")) return say(`From your file: ${/Worker says: ([^\n]*)/.exec(req.lastUserText)?.[1] ?? "nothing"}`)
    if (req.lastUserText.includes("Saved file:")) return { toolCalls: [{ name: "delegate", args: { prompt: req.lastUserText } }] }
    return say("hi")
  },
  planner: (req) => (afterTool(req) ? { text: "Dispatched." } : { toolCalls: [{ name: "delegate", args: { prompt: req.lastUserText } }] }),
  worker: (req) => {
    const read = req.lastToolResults.find((result) => result.toolName === "read_file")
    if (read) return { text: `Worker says: ${read.content.replace(/\s+/g, " ")}` }
    return { toolCalls: [{ name: "read_file", args: { path: /Saved file: (\S+)/.exec(req.lastUserText)?.[1] } }] }
  },
})

const textsIn = (chat: number) => api.sent.filter((message) => message.chat.id === chat && !message.text?.startsWith("⚙️")).map((message) => message.text ?? "")

describe("an uploaded bomb (real grammY, fake Bot API, scripted model)", () => {
  it.each([
    ["a zip bomb .docx", "bomb.docx", async () => (await docxBombs(300 * 1024 * 1024))["one block named by many entries"]!, /bomb\.docx was refused: it unpacks to more than 64 MiB \(a zip bomb\?\)/],
    ["a PDF whose content inflates to 2 GB", "bomb.pdf", () => pdfBomb(2048 * 1024 * 1024), /bomb\.pdf was refused: reading it (needed more than 512 MB of memory|took longer than 30 s)/],
  ])("%s gives the uploader one line, other users are answered meanwhile, and nothing is retried", async (_, name, make, reason) => {
    const bomb = await make()
    server = await startModelServer(script)
    const config = loadConfig({ ...scriptedEnv(dataDir, server.url), ...telegramEnv(api), ALLOWED_USERS: `telegram:${OWNER},*` })
    const log = pino({ level: process.env.STEWARD_TEST_LOG ?? "silent" }, pino.destination(2))
    app = await startApp(config, log, [new TelegramChannel({ ...config.telegram, botToken: api.token }, log)], new ListMemory())
    api.pushUpdate(fileUpdate(UPLOADER, UPLOADER, { document: { ...api.addFile(bomb), file_name: name, mime_type: "application/octet-stream" } }, "what does it say?"))
    // Once the Worker is reading it, another user writes: they are answered within seconds.
    await api.waitFor(() => server!.requests.some((request) => request.role === "worker"), 30_000)
    const asked = performance.now()
    api.pushUpdate(textUpdate(OWNER, OWNER, "hello"))
    await api.waitFor(() => textsIn(OWNER).includes("hi"), 20_000)
    expect(performance.now() - asked).toBeLessThan(5_000)
    await api.waitFor(() => textsIn(UPLOADER).some((text) => text.startsWith("From your file:")), 60_000)
    await app.supervisor.idle()
    expect(textsIn(UPLOADER)).toEqual([expect.stringMatching(reason)])
    // One read, refused: the Worker's two steps, no retry of the task.
    expect(server.requests.filter((request) => request.role === "worker")).toHaveLength(2)
  }, 120_000)
})
