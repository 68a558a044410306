/**
 * `steward setup` as a new owner runs it (the built dist/cli.js, in a fresh folder): flags or
 * prompts on a terminal, one request to the model, getMe to Telegram (TELEGRAM_API_ROOT
 * honoured), `.env` written for this user only, never over an existing one without --force.
 */
import { execFile, spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { startModelServer, type ModelServer } from "../fakes/model-server.ts"
import { startTelegramApi, type TelegramApi } from "../fakes/telegram-api.ts"

const CLI = resolve("dist/cli.js")
let models: ModelServer
let telegram: TelegramApi
let dir: string

beforeAll(async () => {
  models = await startModelServer(() => ({ text: "pong" }), { apiKey: "sk-good" })
  telegram = await startTelegramApi({ username: "stewie_bot" })
})
afterAll(async () => {
  await Promise.all([models.close(), telegram.close()])
})
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "steward-setup-"))
  return () => rmSync(dir, { recursive: true, force: true })
})

function setup(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) =>
    execFile(process.execPath, [CLI, "setup", ...args], { cwd: dir, env: { PATH: process.env.PATH ?? "", TELEGRAM_API_ROOT: telegram.apiRoot, ...env }, timeout: 60_000 }, (error, stdout, stderr) =>
      done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    ),
  )
}

const flags = () => ["--model", "openai-compatible:scripted", "--base-url", models.url, "--api-key", "sk-good", "--telegram-token", telegram.token]
const envFile = () => readFileSync(join(dir, ".env"), "utf8")

describe("steward setup", () => {
  it("checks the model and the Telegram token, writes .env (mode 600) and says what comes next", async () => {
    const { code, stdout, stderr } = await setup(flags())
    expect(code).toBe(0)
    expect(stderr).toMatch(/^ok +model openai-compatible:scripted/m)
    expect(stderr).toMatch(/^ok +telegram: the token works for @stewie_bot/m)
    expect(envFile()).toContain("MODEL=openai-compatible:scripted\n")
    expect(envFile()).toContain(`OPENAI_COMPATIBLE_API_KEY=sk-good\nOPENAI_COMPATIBLE_BASE_URL=${models.url}\nTELEGRAM_BOT_TOKEN=${telegram.token}\nTELEGRAM_API_ROOT=${telegram.apiRoot}\n`)
    expect(statSync(join(dir, ".env")).mode & 0o777).toBe(0o600)
    expect(stdout).toContain("write to @stewie_bot")
    expect(stdout).toContain("deploy/slack-manifest.json")
    expect(stdout).toContain("npm start")
  }, 60_000)

  it("refuses to overwrite an existing .env without --force", async () => {
    writeFileSync(join(dir, ".env"), "MODEL=mine\n")
    const refused = await setup(flags())
    expect(refused.code).toBe(1)
    expect(refused.stderr.trim()).toBe(`steward: ${join(dir, ".env")} exists; give --force to overwrite it (or edit it)`)
    expect(envFile()).toBe("MODEL=mine\n")
    expect((await setup([...flags(), "--force"])).code).toBe(0)
    expect(envFile()).toContain("MODEL=openai-compatible:scripted")
  }, 60_000)

  it("writes nothing when the key or the bot token is refused, naming what failed", async () => {
    const badKey = await setup(["--model", "openai-compatible:scripted", "--base-url", models.url, "--api-key", "sk-bad"])
    expect(badKey.code).toBe(1)
    expect(badKey.stderr).toMatch(/^FAIL +model openai-compatible:scripted .*: the key in OPENAI_COMPATIBLE_API_KEY was rejected/m)
    const badToken = await setup([...flags().slice(0, 6), "--telegram-token", "123456:AAwrong"])
    expect(badToken.code).toBe(1)
    expect(badToken.stderr).toMatch(/^FAIL +telegram: TELEGRAM_BOT_TOKEN was rejected/m)
    expect(existsSync(join(dir, ".env"))).toBe(false)
  }, 60_000)

  it("refuses a malformed model or token as start-up would (exit 2), and asks for flags off a terminal", async () => {
    expect(await setup(["--model", "gpt-4o"])).toMatchObject({ code: 2, stderr: expect.stringMatching(/^steward: --model: expected <provider>:<model-id>/) })
    expect(await setup([...flags().slice(0, 6), "--telegram-token", "hello"])).toMatchObject({ code: 2, stderr: expect.stringMatching(/^steward: TELEGRAM_BOT_TOKEN: expected <bot id>:<secret>/) })
    expect(await setup([])).toMatchObject({ code: 2, stderr: expect.stringMatching(/^steward: give --model/) })
    expect(existsSync(join(dir, ".env"))).toBe(false)
  }, 60_000)

  it("on a terminal, asks for what the flags did not give", async () => {
    // `script` gives the CLI a terminal; the answers are typed into it line by line.
    const answers = ["openai-compatible:scripted", models.url, "sk-good", telegram.token, "", ""].join("\r") + "\r"
    const child = spawn("script", ["-qec", `${process.execPath} ${CLI} setup`, "/dev/null"], { cwd: dir, env: { PATH: process.env.PATH ?? "", TELEGRAM_API_ROOT: telegram.apiRoot, TERM: "dumb" } })
    let output = ""
    let typed = false
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      output += chunk
      if (output.includes("Model, as <provider>") && child.stdin.writable && !typed) {
        typed = true
        child.stdin.write(answers)
      }
    })
    const code = await new Promise<number | null>((done) => child.on("exit", done))
    child.stdin.destroy()
    expect(output).toContain("Telegram bot token from @BotFather")
    expect(code).toBe(0)
    expect(envFile()).toContain(`TELEGRAM_BOT_TOKEN=${telegram.token}`)
  }, 60_000)
})
