import { mkdtempSync, rmSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pino from "pino"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { TelegramChannel } from "../../adapters/telegram/telegram.ts"
import { startSlackApi, type SlackApi } from "../fakes/slack-api.ts"
import { startTelegramApi, type TelegramApi } from "../fakes/telegram-api.ts"
import { StewardProcess } from "../support/process.ts"

let dataDir: string
let steward: StewardProcess | undefined
let blocker: Server | undefined
let telegram: TelegramApi | undefined
let slack: SlackApi | undefined

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), "steward-startup-"))
})
afterEach(async () => {
  if (steward && steward.child.exitCode === null) await steward.kill()
  await new Promise((resolve) => (blocker ? blocker.close(resolve) : resolve(undefined)))
  await telegram?.close()
  await slack?.close()
  blocker = telegram = slack = steward = undefined
  rmSync(dataDir, { recursive: true, force: true })
})

// Nothing is called before start-up fails: the model's address is never reached.
const base = () => ({ DATA_DIR: dataDir, MODEL: "openai-compatible:x", OPENAI_COMPATIBLE_BASE_URL: "http://127.0.0.1:9/v1" })

/** A port something else already listens on (every interface, as Steward's servers bind by default). */
async function takenPort(): Promise<number> {
  blocker = createServer()
  await new Promise<void>((resolve) => blocker!.listen(0, resolve))
  return (blocker.address() as AddressInfo).port
}

async function failsWith(env: Record<string, string>): Promise<string> {
  steward = StewardProcess.start({ ...base(), ...env })
  expect(await steward.exited).toBe(2)
  return steward.stderr.join("").trim()
}

describe("start-up errors name their cause and exit 2 (real program)", () => {
  it("ADMIN_PORT in use", async () => {
    const port = await takenPort()
    expect(await failsWith({ ADMIN_PORT: String(port), ADMIN_HOST: "0.0.0.0" })).toBe(`steward: ADMIN_PORT ${port} is in use`)
  })

  it("HOOKS_PORT in use", async () => {
    const port = await takenPort()
    expect(await failsWith({ HOOKS_TOKEN: "a-token-of-16-chars-or-more", HOOKS_PORT: String(port) })).toBe(`steward: HOOKS_PORT ${port} is in use`)
  })

  it("SLACK_PORT in use", async () => {
    slack = await startSlackApi()
    const port = await takenPort()
    const env = { SLACK_BOT_TOKEN: slack.botToken, SLACK_SIGNING_SECRET: "secret", SLACK_API_URL: slack.apiUrl, SLACK_PORT: String(port), ALLOWED_USERS: "slack:U1001" }
    expect(await failsWith(env)).toBe(`steward: SLACK_PORT ${port} is in use`)
  })

  it("TELEGRAM_WEBHOOK_PORT in use", async () => {
    telegram = await startTelegramApi()
    const port = await takenPort()
    const env = { TELEGRAM_BOT_TOKEN: telegram.token, TELEGRAM_API_ROOT: telegram.apiRoot, TELEGRAM_WEBHOOK_URL: "https://steward.example.com/telegram", TELEGRAM_WEBHOOK_SECRET: "s3cret", TELEGRAM_WEBHOOK_PORT: String(port), ALLOWED_USERS: "telegram:1001" }
    expect(await failsWith(env)).toBe(`steward: TELEGRAM_WEBHOOK_PORT ${port} is in use`)
  })

  it("a malformed ALLOWED_USERS entry", async () => {
    expect(await failsWith({ ALLOWED_USERS: "telegram:1001,slack:bob" })).toBe('steward: ALLOWED_USERS: a Slack user id starts with U or W, e.g. slack:U1001, got entry "slack:bob"')
  })

  it("a Telegram token the API refuses", async () => {
    telegram = await startTelegramApi()
    expect(await failsWith({ TELEGRAM_BOT_TOKEN: "1:wrong", TELEGRAM_API_ROOT: telegram.apiRoot, ALLOWED_USERS: "telegram:1001" })).toBe(
      "steward: TELEGRAM_BOT_TOKEN was refused by Telegram (401 Unauthorized): copy the token @BotFather gave again",
    )
  })
})

describe("an unreachable Telegram API", () => {
  it("that never answers is reported within the connect timeout with the URL tried, and start-up goes on", async () => {
    // Takes connections and never answers, like a black-holed route.
    blocker = createServer(() => {})
    await new Promise<void>((resolve) => blocker!.listen(0, "127.0.0.1", resolve))
    const apiRoot = `http://127.0.0.1:${(blocker.address() as AddressInfo).port}`
    const errors: string[] = []
    const log = pino({ level: "error" }, { write: (line: string) => void errors.push(JSON.parse(line).msg) })
    const channel = new TelegramChannel({ botToken: "123:abc", apiRoot, webhookPort: 0 }, log, { connectTimeoutMs: 300, connectRetryMs: 60_000 })
    const began = performance.now()
    await channel.start({ onMessage: async () => {}, commands: [] })
    expect(performance.now() - began).toBeLessThan(5000)
    expect(errors[0]).toMatch(new RegExp(`^could not reach the Telegram API at ${apiRoot}/bot<token>/getMe: .*; retrying$`))
    expect(channel.health()).toMatchObject({ ok: false, reason: expect.stringContaining(apiRoot) })
    blocker.closeAllConnections()
    await channel.stop()
  })
})
