import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pino from "pino"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { TelegramChannel } from "../../adapters/telegram/telegram.ts"
import { startSlackApi, type SlackApi } from "../fakes/slack-api.ts"
import { startTelegramApi, type TelegramApi } from "../fakes/telegram-api.ts"
import { freePort } from "../../scripts/free-port.mjs"
import { freshDatabase } from "../support/pg.ts"
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

/** How long this machine, as loaded as it is now, takes to start the program and refuse a bad
 *  variable (MODEL unset), which involves no waiting at all. */
async function loadTime(): Promise<number> {
  const began = performance.now()
  const bare = StewardProcess.start({ DATA_DIR: dataDir })
  expect(await bare.exited).toBe(2)
  return performance.now() - began
}

async function failsWith(env: Record<string, string>, options?: { uid?: number }): Promise<string> {
  // The load is measured beside the start-up itself, under the same load of the machine.
  const loading = loadTime()
  const began = performance.now()
  steward = StewardProcess.start({ ...base(), ...env }, options)
  expect(await steward.exited).toBe(2)
  const load = await loading
  // What a restart cannot fix ends start-up within 15 s of waiting (retries, timeouts) — beyond
  // the time loading the program takes on this (shared, busy) machine — in one line.
  expect(performance.now() - began - load).toBeLessThan(15_000)
  const stderr = steward.stderr.join("").trim()
  expect(stderr.split("\n")).toHaveLength(1)
  return stderr
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

describe("what a restart cannot fix exits 2 with one line naming the variable (real program)", () => {
  it("a DATA_DIR that is a file", async () => {
    const file = join(dataDir, "not-a-folder")
    writeFileSync(file, "")
    expect(await failsWith({ DATA_DIR: file })).toBe(`steward: DATA_DIR ${file} is a file, not a folder: set DATA_DIR to a folder`)
  })

  it("a DATA_DIR inside a file", async () => {
    const file = join(dataDir, "not-a-folder")
    writeFileSync(file, "")
    expect(await failsWith({ DATA_DIR: join(file, "data") })).toMatch(/^steward: DATA_DIR .*\/not-a-folder\/data cannot be written \(ENOTDIR\)/)
  })

  it.skipIf(process.getuid?.() !== 0)("a DATA_DIR this user may not write (run as nobody)", async () => {
    chmodSync(dataDir, 0o755)
    expect(await failsWith({ DATA_DIR: join(dataDir, "data") }, { uid: 65534 })).toMatch(/^steward: DATA_DIR .*\/data cannot be written \(EACCES\): give the user running Steward \(uid 65534\) write access/)
  })

  it.each([
    ["ADMIN_HOST", { ADMIN_HOST: "192.0.2.1", ADMIN_PORT: "0" }],
    ["HOOKS_HOST", { HOOKS_HOST: "192.0.2.1", HOOKS_TOKEN: "a-token-of-16-chars-or-more" }],
  ])("%s that is no address of this machine", async (variable, env) => {
    expect(await failsWith({ HOOKS_PORT: String(await freePort()), ...env })).toBe(`steward: ${variable} 192.0.2.1 is not an address of this machine; use 127.0.0.1, 0.0.0.0 (every interface) or one of its own addresses`)
  })

  it("a STORE_URL whose password or database Postgres refuses", async () => {
    const database = await freshDatabase()
    try {
      const wrongPassword = new URL(database.url)
      wrongPassword.password = "not-the-password"
      expect(await failsWith({ STORE_URL: wrongPassword.toString() })).toMatch(/^steward: STORE_URL: Postgres store at postgres:\/\/steward:\*\*\*@127\.0\.0\.1:\d+\/steward_\w+: password authentication failed/)
      const noDatabase = new URL(database.url)
      noDatabase.pathname = "/no_such_database"
      expect(await failsWith({ STORE_URL: noDatabase.toString() })).toMatch(/^steward: STORE_URL: .*no_such_database.*does not exist/)
    } finally {
      await database.drop()
    }
  })

  it("a Slack bot token Slack refuses (invalid_auth), over HTTP and in Socket Mode", async () => {
    slack = await startSlackApi()
    const refused = "steward: SLACK_BOT_TOKEN was refused by Slack (invalid_auth): copy the Bot User OAuth Token (xoxb-…) from the app's OAuth & Permissions page again"
    expect(await failsWith({ SLACK_BOT_TOKEN: "xoxb-wrong", SLACK_SIGNING_SECRET: "secret", SLACK_API_URL: slack.apiUrl, SLACK_PORT: "1", ALLOWED_USERS: "slack:U1001" })).toBe(refused)
    expect(await failsWith({ SLACK_BOT_TOKEN: "xoxb-wrong", SLACK_APP_TOKEN: slack.appToken, SLACK_API_URL: slack.apiUrl, ALLOWED_USERS: "slack:U1001" })).toBe(refused)
  })

  it("a TZ the system cannot read", async () => {
    expect(await failsWith({ TZ: "Mars/Olympus" })).toBe('steward: TZ: expected an IANA time zone, e.g. Europe/Berlin (or unset TZ and set DEFAULT_TIMEZONE), got "Mars/Olympus"')
  })

  it.each([
    [{ SLACK_APP_TOKEN: "xapp-1-A" }, "steward: SLACK_BOT_TOKEN is not set: expected the Bot User OAuth Token (xoxb-…), because SLACK_APP_TOKEN is set"],
    [{ SLACK_SIGNING_SECRET: "abc" }, "steward: SLACK_BOT_TOKEN is not set: expected the Bot User OAuth Token (xoxb-…), because SLACK_SIGNING_SECRET is set"],
    [{ TELEGRAM_WEBHOOK_SECRET: "s3cret" }, "steward: TELEGRAM_BOT_TOKEN is not set: expected the token @BotFather gave (<bot id>:<secret>), because TELEGRAM_WEBHOOK_SECRET is set"],
    [{ TELEGRAM_BOT_TOKEN: "hello" }, 'steward: TELEGRAM_BOT_TOKEN: expected <bot id>:<secret> as @BotFather gives it, e.g. 123456789:AAE…, got "hello" (5 characters)'],
  ])("a half-set or malformed chat setting %o, with no input to read", async (env, line) => {
    expect(await failsWith(env)).toBe(line)
  })
})

describe("an unreachable Slack API", () => {
  it("is a warning naming Slack and the URL, and Steward keeps running", async () => {
    slack = await startSlackApi()
    // Refuses connections now: nothing listens on a port just closed.
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve))
    const port = (closed.address() as AddressInfo).port
    await new Promise((resolve) => closed.close(resolve))
    const apiUrl = `http://127.0.0.1:${port}/api/`
    steward = StewardProcess.start({ ...base(), SLACK_BOT_TOKEN: slack.botToken, SLACK_SIGNING_SECRET: "secret", SLACK_API_URL: apiUrl, SLACK_PORT: String(await freePort()), ALLOWED_USERS: "slack:U1001", LOG_LEVEL: "info" })
    await steward.waitFor((p) => p.logs.some((line) => line.msg === "Steward started"), "start-up")
    const warning = steward.logs.find((line) => typeof line.msg === "string" && line.msg.startsWith("could not reach Slack"))
    expect(warning).toMatchObject({ level: 40, msg: `could not reach Slack at ${apiUrl}auth.test: ECONNREFUSED; retrying` })
    expect(steward.child.exitCode).toBeNull()
  })
})

describe("an unreachable Telegram API", () => {
  it("that never answers is reported within the connect timeout with the URL tried, and start-up goes on", async () => {
    // Takes connections and never answers, like a black-holed route.
    blocker = createServer(() => {})
    await new Promise<void>((resolve) => blocker!.listen(0, "127.0.0.1", resolve))
    const apiRoot = `http://127.0.0.1:${(blocker.address() as AddressInfo).port}`
    const errors: string[] = []
    const log = pino({ level: "warn" }, { write: (line: string) => void errors.push(JSON.parse(line).msg) })
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
