import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pino from "pino"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { TelegramChannel } from "../../adapters/telegram/telegram.ts"
import { startApp, type App } from "../../src/app.ts"
import { loadConfig } from "../../src/config/config.ts"
import { startModelServer, type ModelServer } from "../fakes/model-server.ts"
import { startTelegramApi, textUpdate, type TelegramApi } from "../fakes/telegram-api.ts"
import { heldReplying, scriptedEnv, telegramEnv } from "../support/e2e.ts"
import { ListMemory } from "../support/harness.ts"

const OWNER = 1001
/** The first sign of life comes this soon after the message, without waiting for the model. */
const FIRST_SIGN_MS = 1000
const RENEW_MS = 100

let api: TelegramApi
let server: ModelServer | undefined
let dataDir: string
let app: App | undefined
let held: ReturnType<typeof heldReplying>

beforeEach(async () => {
  api = await startTelegramApi()
  dataDir = mkdtempSync(join(tmpdir(), "steward-telegram-busy-"))
  held = heldReplying("Here you are.")
})

afterEach(async () => {
  held.release()
  await app?.stop()
  app = undefined
  await server?.close()
  server = undefined
  await api.close()
  rmSync(dataDir, { recursive: true, force: true })
})

const typing = () => api.requests.filter((request) => request.method === "sendChatAction" && Number(request.params.chat_id) === OWNER && request.params.action === "typing")

describe("Telegram busy indicator end to end (real grammY, fake Bot API, a slow scripted model)", () => {
  it("shows typing within a second of the message and before the model answers, renews it while the model works, and stops once the answer is out", async () => {
    server = await startModelServer(held.script)
    const config = loadConfig({ ...scriptedEnv(dataDir, server.url), ALLOWED_USERS: `telegram:${OWNER}`, ...telegramEnv(api) })
    const log = pino({ level: process.env.STEWARD_TEST_LOG ?? "silent" }, pino.destination(2))
    app = await startApp(config, log, [new TelegramChannel({ ...config.telegram, botToken: api.token }, log, { typingRenewMs: RENEW_MS })], new ListMemory())

    const sentAt = performance.now()
    api.pushUpdate(textUpdate(OWNER, OWNER, "what is up?"))
    const first = await api.waitFor(() => typing()[0])
    expect(first.at - sentAt).toBeLessThan(FIRST_SIGN_MS)
    expect(held.answeredAt()).toBeUndefined()
    await api.waitFor(() => typing().length >= 3)
    expect(held.answeredAt()).toBeUndefined()

    held.release()
    await api.waitFor(() => api.sent.some((message) => message.chat.id === OWNER && message.text === "Here you are."))
    await app.supervisor.idle()
    const after = typing().length
    // Nothing to await for an absence: three renewal periods without a call (one may have been on its way).
    await new Promise((resolve) => setTimeout(resolve, 3 * RENEW_MS))
    expect(typing().length).toBeLessThanOrEqual(after + 1)
  })
})
