import pino from "pino"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { TelegramChannel } from "../../adapters/telegram/telegram.ts"
import { startApp, type App } from "../../src/app.ts"
import { loadConfig } from "../../src/config/config.ts"
import { byRole, startModelServer, type ChatRequest, type ModelServer, type Script } from "../fakes/model-server.ts"
import { startTelegramApi, textUpdate, type TelegramApi } from "../fakes/telegram-api.ts"
import { replying, scriptedEnv, telegramEnv } from "../support/e2e.ts"
import { ListMemory } from "../support/harness.ts"
import { afterTool, say } from "../support/scripts.ts"
import { endPlatformTest, platformTest } from "../support/platform-test.ts"

const OWNER = 1001
const USER = 2002

let api: TelegramApi
let server: ModelServer | undefined
let dataDir: string
let app: App | undefined

beforeEach(async () => ({ api, dataDir } = await platformTest(startTelegramApi, "quotas")))
afterEach(async () => {
  await endPlatformTest({ api, dataDir }, { app, models: server })
  app = server = undefined
})

/** Steward on Telegram: OWNER owns it, anyone else may talk to it (and is limited by the quotas). */
async function start(script: Script, extra: Record<string, string> = {}): Promise<App> {
  server = await startModelServer(script)
  const config = loadConfig({ ...scriptedEnv(dataDir, server.url), ...telegramEnv(api), ALLOWED_USERS: `telegram:${OWNER},*`, ...extra })
  const log = pino({ level: process.env.STEWARD_TEST_LOG ?? "silent" }, pino.destination(2))
  app = await startApp(config, log, [new TelegramChannel({ ...config.telegram, botToken: api.token }, log)], new ListMemory())
  return app
}

const textsIn = (chat: number) => api.sent.filter((message) => message.chat.id === chat && !message.text?.startsWith("⚙️")).map((message) => message.text ?? "")
const tellerCalls = () => server!.requests.filter((request) => request.role === "teller").length

describe("quotas (real grammY, fake Bot API, scripted model)", () => {
  it("a 300-message burst costs a few model calls and one slow-down notice; the owner is answered meanwhile", async () => {
    const steward = await start(byRole({ teller: replying("ok") }))
    for (let n = 1; n <= 300; n++) api.pushUpdate(textUpdate(USER, USER, `message ${n}`))
    api.pushUpdate(textUpdate(OWNER, OWNER, "owner here"))
    await api.waitFor(() => textsIn(OWNER).includes("ok"), 20_000)
    await api.waitFor(() => textsIn(USER).some((text) => text.includes("faster than I take them")), 20_000)
    await steward.supervisor.idle()
    const notices = textsIn(USER).filter((text) => text.includes("faster than I take them"))
    expect(notices).toEqual(["You are sending messages faster than I take them (20 a minute). I skipped the ones after that; please wait a minute and send what still matters."])
    // 20 messages taken (folded into a few turns), one for the owner: not hundreds.
    expect(tellerCalls()).toBeGreaterThan(1)
    expect(tellerCalls()).toBeLessThanOrEqual(21)
  }, 60_000)

  it("a user's Planner cannot schedule runs more often than QUOTA_MIN_INTERVAL_SECONDS nor more than QUOTA_SCHEDULES; the owner's can", async () => {
    const results: Record<string, string[]> = {}
    const planner: Script = (req: ChatRequest) => {
      if (afterTool(req)) {
        results[req.lastUserText.includes("owner") ? "owner" : "user"] = req.lastToolResults.map((result) => result.content)
        return { text: "scheduled" }
      }
      // 40 minute-by-minute schedules in one step, as in the report, then 12 at the allowed pace.
      const every = (interval: number, count: number) => Array.from({ length: count }, (_, n) => ({ name: "schedule", args: { type: "recurring", interval, prompt: `check ${interval}/${n}` } }))
      return { toolCalls: [...every(60, 40), ...every(900, 12)] }
    }
    const teller: Script = (req) => {
      if (afterTool(req)) return { text: "" }
      if (req.lastUserText.startsWith("<task-results>")) return say("done")
      return { toolCalls: [{ name: "delegate", args: { prompt: req.lastUserText } }] }
    }
    const steward = await start(byRole({ teller, planner }))
    api.pushUpdate(textUpdate(USER, USER, "user: check the site"))
    await api.waitFor(() => textsIn(USER).includes("done"), 30_000)
    api.pushUpdate(textUpdate(OWNER, OWNER, "owner: check the site"))
    await api.waitFor(() => textsIn(OWNER).includes("done"), 30_000)
    await steward.supervisor.idle()
    const { scheduler } = steward.supervisor
    expect(scheduler.inForce(`telegram:${USER}`).map((trigger) => trigger.interval)).toEqual(Array(10).fill(900))
    expect(scheduler.inForce(`telegram:${OWNER}`)).toHaveLength(52)
    const refusals = results.user!.filter((content) => /QUOTA_/.test(content))
    expect(refusals.filter((content) => content.includes("would run every 60 s, and yours may run at most every 900 s (QUOTA_MIN_INTERVAL_SECONDS)"))).toHaveLength(40)
    expect(refusals.filter((content) => content.includes("you have 10 recurring schedules, the most you may have (QUOTA_SCHEDULES=10)"))).toHaveLength(2)
  }, 90_000)

  it("QUOTA_TOKENS_PER_DAY is checked before every model call: one long Worker run stops at the limit, not at its last step", async () => {
    const cheap = { usage: { prompt: 1, completion: 1 } }
    const steward = await start(
      byRole({
        teller: (req) => (afterTool(req) ? { text: "", ...cheap } : { toolCalls: [{ name: "delegate", args: { prompt: "dig through my files" } }], ...cheap }),
        planner: (req) => (afterTool(req) ? { text: "Dispatched.", ...cheap } : { toolCalls: [{ name: "delegate", args: { prompt: req.lastUserText } }], ...cheap }),
        // Every step costs 400 tokens and asks for one more (up to WORKER_MAX_STEPS, 30).
        worker: (req) => ({ toolCalls: [{ name: "list_files", args: { path: `.${"/.".repeat(req.messages.length % 7)}` } }], usage: { prompt: 400, completion: 0 } }),
      }),
      { QUOTA_TOKENS_PER_DAY: "2000" },
    )
    api.pushUpdate(textUpdate(USER, USER, "dig"))
    await api.waitFor(() => textsIn(USER).some((text) => text.includes("QUOTA_TOKENS_PER_DAY")))
    await steward.supervisor.idle()
    expect(server!.requests.filter((request) => request.role === "worker").length).toBe(5) // 5 × 400 = 2000: the sixth is refused
  }, 60_000)

  it("a user over QUOTA_TOKENS_PER_DAY is told once and costs no more model calls; the owner keeps being answered", async () => {
    const steward = await start(byRole({ teller: replying("ok") }), { QUOTA_TOKENS_PER_DAY: "1" })
    api.pushUpdate(textUpdate(USER, USER, "hello"))
    await api.waitFor(() => textsIn(USER).includes("ok"))
    await steward.supervisor.idle()
    const calls = tellerCalls()
    for (const text of ["again", "and again", "still there?"]) {
      api.pushUpdate(textUpdate(USER, USER, text))
      await steward.supervisor.idle()
    }
    api.pushUpdate(textUpdate(OWNER, OWNER, "owner here"))
    await api.waitFor(() => textsIn(OWNER).includes("ok"))
    await api.waitFor(() => textsIn(USER).length >= 2)
    await steward.supervisor.idle()
    expect(textsIn(USER)).toEqual(["ok", "You have used today's 1 model tokens (QUOTA_TOKENS_PER_DAY); I can work for you again after midnight UTC."])
    expect(tellerCalls()).toBe(calls + 1) // the owner's turn only
  }, 60_000)
})
