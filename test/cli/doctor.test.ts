import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freePort } from "../../scripts/free-port.mjs"
import { runDoctor } from "../../src/doctor/doctor.ts"
import { startModelServer, type ModelServer } from "../fakes/model-server.ts"
import { startSlackApi, type SlackApi } from "../fakes/slack-api.ts"
import { startTelegramApi, type TelegramApi } from "../fakes/telegram-api.ts"
import { freshDatabase } from "../support/pg.ts"

let models: ModelServer
let telegram: TelegramApi
let slack: SlackApi
let dataDir: string

beforeAll(async () => {
  models = await startModelServer(() => ({ text: "pong" }), { apiKey: "sk-good" })
  telegram = await startTelegramApi()
  slack = await startSlackApi()
  dataDir = mkdtempSync(join(tmpdir(), "steward-doctor-"))
})
afterAll(async () => {
  await Promise.all([models.close(), telegram.close(), slack.close()])
  rmSync(dataDir, { recursive: true, force: true })
})

const env = (extra: Record<string, string> = {}) => ({
  DATA_DIR: dataDir,
  MODEL: "openai-compatible:scripted",
  OPENAI_COMPATIBLE_BASE_URL: models.url,
  OPENAI_COMPATIBLE_API_KEY: "sk-good",
  ...extra,
})
const byName = (checks: Awaited<ReturnType<typeof runDoctor>>, name: string) => checks.filter((check) => check.name.startsWith(name))

describe("steward doctor", () => {
  it("passes a working setup: configuration, data folder, model, Telegram getMe, Slack auth.test", async () => {
    const checks = await runDoctor(env({ TELEGRAM_BOT_TOKEN: telegram.token, TELEGRAM_API_ROOT: telegram.apiRoot, SLACK_BOT_TOKEN: slack.botToken, SLACK_APP_TOKEN: slack.appToken, SLACK_API_URL: slack.apiUrl }))
    expect(checks.filter((check) => !check.ok)).toEqual([])
    expect(checks.map((check) => check.name)).toEqual(["configuration", "data folder", "data folder lock", "model openai-compatible:scripted (teller, planner, worker)", "telegram", "slack bot token", "slack app token"])
    expect(byName(checks, "telegram")[0]!.detail).toContain(`@${telegram.me.username}`)
  })

  it("names a rejected key, an unknown model and rejected channel tokens, each with a fix", async () => {
    const checks = await runDoctor(env({ OPENAI_COMPATIBLE_API_KEY: "sk-bad", TELEGRAM_BOT_TOKEN: "123456:AAwrongtoken", TELEGRAM_API_ROOT: telegram.apiRoot, SLACK_BOT_TOKEN: "xoxb-wrong", SLACK_APP_TOKEN: slack.appToken, SLACK_API_URL: slack.apiUrl }))
    const model = byName(checks, "model")[0]!
    expect(model).toMatchObject({ ok: false, detail: "the key in OPENAI_COMPATIBLE_API_KEY was rejected" })
    expect(model.fix).toContain("OPENAI_COMPATIBLE_API_KEY")
    expect(byName(checks, "telegram")[0]).toMatchObject({ ok: false, detail: "TELEGRAM_BOT_TOKEN was rejected" })
    expect(byName(checks, "slack bot token")[0]).toMatchObject({ ok: false, detail: "SLACK_BOT_TOKEN was rejected (invalid_auth)" })

    const missing = byName(await runDoctor(env({ MODEL: "openai-compatible:no-such-model" })), "model")[0]!
    expect(missing).toMatchObject({ ok: false, detail: `model no-such-model not found at ${models.url}` })
    expect(missing.fix).toContain("MODEL")
  })

  it("checks the Postgres store when STORE_URL is set, naming it without its password", async () => {
    const database = await freshDatabase()
    try {
      const store = byName(await runDoctor(env({ STORE_URL: database.url })), "store")
      expect(store).toEqual([{ name: "store", ok: true, detail: expect.stringMatching(/^Postgres \d+\.\d+ at postgres:\/\/steward:\*\*\*@127\.0\.0\.1:\d+\/steward_\w+ answers$/) }])
      const closed = new URL(database.url)
      closed.port = String(await freePort())
      const down = byName(await runDoctor(env({ STORE_URL: closed.toString() })), "store")[0]!
      expect(down).toMatchObject({ ok: false, detail: expect.stringMatching(/^Postgres store at postgres:\/\/steward:\*\*\*@127\.0\.0\.1:\d+\/steward_\w+: .*ECONNREFUSED/) })
      expect(down.fix).toContain("STORE_URL")
    } finally {
      await database.drop()
    }
  })

  it("reports a configuration mistake as its first line and still checks the data folder", async () => {
    const checks = await runDoctor({ DATA_DIR: dataDir, MODEL: "nonsense" })
    expect(checks[0]).toMatchObject({ name: "configuration", ok: false })
    expect(checks.slice(1).map((check) => check.name)).toEqual(["data folder", "data folder lock"])
  })

  it.each([
    [{ SLACK_APP_TOKEN: "xapp-1-A" }, "SLACK_BOT_TOKEN is not set"],
    [{ SLACK_SIGNING_SECRET: "abc" }, "SLACK_BOT_TOKEN is not set"],
    [{ TELEGRAM_WEBHOOK_SECRET: "s3cret" }, "TELEGRAM_BOT_TOKEN is not set"],
    [{ TELEGRAM_BOT_TOKEN: "hello" }, "TELEGRAM_BOT_TOKEN: expected <bot id>:<secret>"],
    [{ SLACK_BOT_TOKEN: "xoxp-1", SLACK_APP_TOKEN: "xapp-1" }, "SLACK_BOT_TOKEN: expected the Bot User OAuth Token, which starts with xoxb-"],
  ])("fails a half-set or malformed chat setting %o as start-up refuses it", async (extra, detail) => {
    const checks = await runDoctor(env(extra))
    expect(checks[0]).toMatchObject({ name: "configuration", ok: false, detail: expect.stringContaining(detail) })
  })

  it("fails on a data folder that cannot be written", async () => {
    const file = join(dataDir, "a-file")
    writeFileSync(file, "")
    const checks = await runDoctor(env({ DATA_DIR: join(file, "data") }))
    expect(byName(checks, "data folder")[0]).toMatchObject({ ok: false })
  })
})
