import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer as createHttpServer } from "node:http"
import { createServer, type Server } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, it, onTestFinished } from "vitest"
import { StewardProcess } from "../support/process.ts"

/** Each secret as a user would configure it (a token with a space is refused at start-up now; its
 *  escaped spellings are covered by test/log/redact.test.ts). */
const SECRETS = {
  TELEGRAM_BOT_TOKEN: "123456:AAF-secret_token",
  OPENAI_API_KEY: "sk-proj-openaikey0123456789",
  ANTHROPIC_API_KEY: "sk-ant-api03-anthropickey01",
  OPENAI_COMPATIBLE_API_KEY: "compatible-key-0123456789",
  HOOKS_TOKEN: "hooks-token-0123456789abcdef",
  BRAVE_API_KEY: "BSA-brave-key-0123456789",
}
const SLACK_SECRETS = {
  SLACK_BOT_TOKEN: "xoxb-1111-2222-slackbottoken",
  SLACK_APP_TOKEN: "xapp-1-A111-2222-slackapptoken",
  SLACK_SIGNING_SECRET: "8f1e2d3c4b5a69788796a5b4c3d2e1f0",
}
const DB_PASSWORD = "db pass@word-0123"

/** The spellings a secret is looked for in: raw, percent-encoded (both cases, a space as %20 or +), in a JSON string. */
function spellings(secret: string): string[] {
  const encoded = encodeURIComponent(secret)
  return [secret, encoded, encoded.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase()), encodeURI(secret), new URLSearchParams({ s: secret }).toString().slice(2), JSON.stringify(secret).slice(1, -1)]
}

/** The secrets (by variable) found in `text` in any spelling. */
const leaked = (text: string, secrets: Record<string, string>) => Object.entries(secrets).flatMap(([name, secret]) => spellings(secret).filter((form) => text.includes(form)).map((form) => `${name} as ${form}`))

/** A TCP server that drops every connection: every integration pointed at it fails with a network error. */
async function dropping(): Promise<{ server: Server; url: string }> {
  const server = createServer((socket) => socket.destroy())
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as { port: number }
  return { server, url: `http://127.0.0.1:${port}` }
}

/** A Bot API that answers getMe and the start-up calls but drops every getUpdates: polling fails
 *  with a network error after the bot has connected (grammY's HttpError, the token in its nested error's URL). */
async function pollingFails(): Promise<{ server: Server; url: string }> {
  const server = createHttpServer((req, res) => {
    if (req.url?.endsWith("/getUpdates")) return req.socket.destroy()
    const result = req.url?.endsWith("/getMe") ? { id: 1, is_bot: true, first_name: "Steward", username: "steward_bot" } : true
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ok: true, result }))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}` }
}

async function freePort(): Promise<number> {
  const { server, url } = await dropping()
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return Number(new URL(url).port)
}

let dataDir: string
let drop: { server: Server; url: string }
let steward: StewardProcess | undefined

beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "steward-secrets-"))
  drop = await dropping()
})
afterEach(async () => {
  if (steward && steward.child.exitCode === null) await steward.kill()
  steward = undefined
  await new Promise<void>((resolve) => drop.server.close(() => resolve()))
  rmSync(dataDir, { recursive: true, force: true })
})

describe("secrets never reach the log (the real program at debug level, every integration failing)", () => {
  it("Telegram, the three model providers, search and hooks fail; the whole log and stderr hold no secret in any spelling", async () => {
    const logFile = join(dataDir, "steward.log")
    const telegram = await pollingFails()
    onTestFinished(() => new Promise<void>((resolve) => telegram.server.close(() => resolve())))
    steward = StewardProcess.start({
      ...SECRETS,
      DATA_DIR: dataDir,
      LOG_LEVEL: "debug",
      LOG_FILE: logFile,
      TELEGRAM_API_ROOT: telegram.url,
      TELLER_MODEL: "openai-compatible:teller",
      OPENAI_COMPATIBLE_BASE_URL: `${drop.url}/v1`,
      PLANNER_MODEL: "openai:gpt-planner",
      OPENAI_BASE_URL: `${drop.url}/v1`,
      WORKER_MODEL: "anthropic:claude-worker",
      ANTHROPIC_BASE_URL: `${drop.url}/v1`,
      SEARCH_PROVIDER: "brave",
      BRAVE_API_URL: `${drop.url}/search`,
      HOOKS_PORT: String(await freePort()),
      SHUTDOWN_GRACE: "0",
    })
    const log = () => (existsSync(logFile) ? readFileSync(logFile, "utf8") : "")
    // Each integration has failed and said so: Telegram's polling, the model checks of all three providers.
    await steward.waitFor(() => log().includes("polling Telegram failed") && (log().match(/"msg":"model /g) ?? []).length >= 3, "every integration's failure in the log", 60_000)
    await steward.kill("SIGTERM")
    const whole = log() + steward.stderr.join("")
    expect(whole).toContain("[redacted]")
    expect(leaked(whole, SECRETS)).toEqual([])
  }, 120_000)

  it("Slack's bot and app tokens and signing secret are not in the log of a Socket Mode start that fails", async () => {
    const logFile = join(dataDir, "steward.log")
    steward = StewardProcess.start({ ...SLACK_SECRETS, DATA_DIR: dataDir, LOG_LEVEL: "debug", LOG_FILE: logFile, SLACK_API_URL: `${drop.url}/api/`, MODEL: "openai-compatible:m", OPENAI_COMPATIBLE_BASE_URL: `${drop.url}/v1`, OPENAI_COMPATIBLE_API_KEY: SECRETS.OPENAI_COMPATIBLE_API_KEY, SHUTDOWN_GRACE: "0" })
    const log = () => (existsSync(logFile) ? readFileSync(logFile, "utf8") : "")
    // Slack out of reach is retried in the background (a restart would not fix it sooner): its
    // failure is logged, with the debug lines of Slack's client.
    await steward.waitFor(() => /retrying/.test(log()) && /"level":20/.test(log()), "Slack's failure in the log", 60_000)
    await steward.kill("SIGTERM")
    const whole = log() + steward.stderr.join("")
    expect(leaked(whole, { ...SLACK_SECRETS, OPENAI_COMPATIBLE_API_KEY: SECRETS.OPENAI_COMPATIBLE_API_KEY })).toEqual([])
  }, 90_000)

  it("a database password in STORE_URL is not in the start-up failure nor in the log", async () => {
    const port = await freePort()
    const logFile = join(dataDir, "steward.log")
    steward = StewardProcess.start({ DATA_DIR: dataDir, LOG_LEVEL: "debug", LOG_FILE: logFile, MODEL: "openai-compatible:m", OPENAI_COMPATIBLE_BASE_URL: `${drop.url}/v1`, STORE_URL: `postgres://steward:${encodeURIComponent(DB_PASSWORD)}@127.0.0.1:${port}/steward?connect_timeout=2` })
    expect(await steward.exited).not.toBe(0)
    const whole = (existsSync(logFile) ? readFileSync(logFile, "utf8") : "") + steward.stderr.join("")
    expect(whole).toMatch(/could not start/)
    expect(leaked(whole, { STORE_URL: DB_PASSWORD })).toEqual([])
  }, 90_000)
})
