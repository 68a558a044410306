/**
 * What an owner sees when starting Steward (the real program): on a terminal (a pty from
 * `script`) readable log lines naming the bot, with JSON only when piped; in a console chat,
 * where the logs go to a file, the start, a start-up warning and the stop still on the terminal.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { startSlackApi, type SlackApi } from "../fakes/slack-api.ts"
import { startTelegramApi, type TelegramApi } from "../fakes/telegram-api.ts"
import { StewardProcess } from "../support/process.ts"
import { waitFor } from "../support/wait-for.ts"

let dataDir: string
let telegram: TelegramApi | undefined
let slack: SlackApi | undefined
let steward: StewardProcess | undefined
let terminal: ChildProcessWithoutNullStreams | undefined

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), "steward-terminal-"))
})
afterEach(async () => {
  if (steward && steward.child.exitCode === null) await steward.kill()
  if (terminal && terminal.exitCode === null) terminal.kill("SIGKILL")
  await telegram?.close()
  await slack?.close()
  telegram = slack = steward = terminal = undefined
  rmSync(dataDir, { recursive: true, force: true })
})

// The model's address is unreachable: its check at start-up warns.
const base = () => ({ DATA_DIR: dataDir, MODEL: "openai-compatible:x", OPENAI_COMPATIBLE_BASE_URL: "http://127.0.0.1:9/v1", ADMIN_PORT: "off" })

/** `node dist/main.js` on a terminal of its own; returns what the terminal shows, as it grows. */
function onTerminal(env: Record<string, string>): { output: () => string } {
  let output = ""
  terminal = spawn("script", ["-qec", `${process.execPath} ${resolve("dist/main.js")}`, "/dev/null"], { env: { PATH: process.env.PATH ?? "", TERM: "dumb", ...base(), ...env } })
  terminal.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk))
  return { output: () => output }
}

describe("on a terminal", () => {
  it("logs are readable lines naming the Telegram bot, not JSON", async () => {
    telegram = await startTelegramApi({ username: "stewie_bot" })
    const shown = onTerminal({ TELEGRAM_BOT_TOKEN: telegram.token, TELEGRAM_API_ROOT: telegram.apiRoot, ALLOWED_USERS: "telegram:1001" })
    await waitFor(() => shown.output().includes("Steward started"), 60_000)
    expect(shown.output()).toMatch(/INFO.*Telegram: connected as @stewie_bot/)
    expect(shown.output()).not.toContain('{"level"')
  }, 90_000)

  it("in a console chat, with the logs in a file, the start, the model warning and the stop still show", async () => {
    const shown = onTerminal({})
    await waitFor(() => shown.output().includes("steward: warning: model openai-compatible:x"), 60_000)
    expect(shown.output()).toContain(`steward: started (console); logs in ${join(dataDir, "steward.log")}; Ctrl-C stops`)
    terminal!.stdin.write("\x03") // Ctrl-C, typed
    await waitFor(() => shown.output().includes("steward: stopped"), 30_000)
  }, 90_000)
})

describe("piped", () => {
  it("logs are JSON lines, and start-up names the Slack workspace and bot user", async () => {
    slack = await startSlackApi()
    steward = StewardProcess.start({ ...base(), SLACK_BOT_TOKEN: slack.botToken, SLACK_APP_TOKEN: slack.appToken, SLACK_API_URL: slack.apiUrl, ALLOWED_USERS: "slack:U1001", LOG_LEVEL: "info" })
    await steward.waitFor((p) => p.logs.some((line) => line.msg === "Steward started"), "start-up", 60_000)
    expect(steward.logs.find((line) => String(line.msg).startsWith("Slack:"))).toMatchObject({ msg: "Slack: workspace Steward Test as @steward", team: "Steward Test", bot: "steward" })
  }, 90_000)
})
