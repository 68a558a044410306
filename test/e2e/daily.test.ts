/**
 * Issue 14 items 6-11 end to end: Slack's user zone from users.info (real Bolt over HTTP, fake
 * Web API); on Telegram (real grammY, fake Bot API) a quiet schedule, /pause, /resume, /stop,
 * /timezone, and remember → /memory → a correction → forget → /memory over real memory files,
 * with a scripted model over HTTP.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pino from "pino"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { SlackChannel } from "../../adapters/slack/slack.ts"
import { TelegramChannel } from "../../adapters/telegram/telegram.ts"
import { startApp, type App, type SupervisorMemory } from "../../src/app.ts"
import { loadConfig } from "../../src/config/config.ts"
import { Memory } from "../../src/memory/memory.ts"
import { byRole, startModelServer, type ChatRequest, type ModelServer, type Reply, type Script } from "../fakes/model-server.ts"
import { dmEvent, eventCallback, EventSender, startSlackApi, type SlackApi } from "../fakes/slack-api.ts"
import { startTelegramApi, textUpdate, type TelegramApi } from "../fakes/telegram-api.ts"
import { ListMemory } from "../support/harness.ts"
import { scriptedEnv, slackEnv, telegramEnv } from "../support/e2e.ts"
import { afterTool, envText, say, systemText } from "../support/scripts.ts"

let server: ModelServer | undefined
let app: App | undefined
let dataDir: string
const log = () => pino({ level: process.env.STEWARD_TEST_LOG ?? "silent" }, pino.destination(2))
const tellerSystems = () => server!.requests.filter((r) => r.role === "teller").map(systemText)
const tellerEnvs = () => server!.requests.filter((r) => r.role === "teller").map(envText)

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), "steward-daily-e2e-"))
})
afterEach(async () => {
  await app?.stop()
  app = undefined
  await server?.close()
  server = undefined
  rmSync(dataDir, { recursive: true, force: true })
})

describe("Slack: the user's zone from users.info", () => {
  let api: SlackApi
  beforeEach(async () => {
    api = await startSlackApi()
  })
  afterEach(() => api.close())

  it("gives the agents the date in the zone of the user's Slack profile, asking Slack once for several messages", async () => {
    const OWNER = "U0OWNER"
    api.userZones.set(OWNER, "Asia/Kolkata")
    server = await startModelServer(byRole({ teller: (req) => (afterTool(req) ? { text: "" } : say("hi")) }))
    const config = loadConfig({ ...scriptedEnv(dataDir, server.url), ALLOWED_USERS: `slack:${OWNER}`, ...slackEnv(api), DEFAULT_TIMEZONE: "UTC" })
    const channel = new SlackChannel({ ...config.slack, botToken: api.botToken }, log(), { host: "127.0.0.1", port: 0, retryConfig: { retries: 0 } })
    app = await startApp(config, log(), [channel], new ListMemory())
    const sender = new EventSender(`http://127.0.0.1:${channel.httpPort}/slack/events`, api.signingSecret)
    const replies = (count: number) => api.waitFor(() => api.messages.filter((m) => m.channel === "D0OWNER").length >= count, 10_000)
    await sender.event(eventCallback(api.team, dmEvent(OWNER, "D0OWNER", "hello")))
    await replies(1)
    await sender.event(eventCallback(api.team, dmEvent(OWNER, "D0OWNER", "and again")))
    await replies(2)
    await app.supervisor.idle()
    for (const env of tellerEnvs()) expect(env).toMatch(/\(time zone Asia\/Kolkata; ISO \S+\+05:30\)/)
    expect(api.calls.filter((call) => call.method === "users.info").map((call) => call.params.user)).toEqual([OWNER])
  })
})

describe("Telegram: /timezone, /memory, correcting and forgetting", () => {
  let api: TelegramApi
  beforeEach(async () => {
    api = await startTelegramApi()
  })
  afterEach(() => api.close())

  const OWNER = 1001
  const textsIn = () => api.sent.filter((m) => m.chat.id === OWNER && !m.text?.startsWith("⚙️")).map((m) => m.text ?? "")

  /** A Teller that remembers, corrects and forgets as told, and reports what its tool returned. */
  function teller(req: ChatRequest): Reply {
    if (afterTool(req)) {
      const result = req.lastToolResults[0]!
      return result.toolName === "reply" ? { text: "" } : say(`${result.toolName}: ${result.content}`)
    }
    const text = req.lastUserText
    if (text.startsWith("remember")) return { toolCalls: [{ name: "remember", args: { content: "The user lives in Berlin.", longTerm: true } }] }
    if (text.startsWith("I moved")) return { toolCalls: [{ name: "forget", args: { query: "lives in Berlin", replacement: "The user lives in Munich." } }] }
    if (text.startsWith("forget")) return { toolCalls: [{ name: "forget", args: { query: "Munich" } }] }
    return say("ok")
  }

  /** Steward with the Telegram channel and `memory`, answering through the scripted model. */
  async function start(script: Script, memory: SupervisorMemory = new ListMemory()): Promise<App> {
    server = await startModelServer(script)
    const config = loadConfig({ ...scriptedEnv(dataDir, server.url), ALLOWED_USERS: `telegram:${OWNER}`, ...telegramEnv(api) })
    app = await startApp(config, log(), [new TelegramChannel({ ...config.telegram, botToken: api.token }, log())], memory)
    return app
  }

  /** Sends `text` and resolves with the first message Steward sent after it, once idle. */
  async function answer(text: string): Promise<string> {
    const before = textsIn().length
    api.pushUpdate(textUpdate(OWNER, OWNER, text))
    await api.waitFor(() => textsIn().length > before, 10_000)
    await app!.supervisor.idle()
    return textsIn()[before]!
  }

  it("runs a quiet schedule that posts nothing, pauses and resumes a schedule by id prefix, and /stop ends a task", async () => {
    const worker = { calls: 0 }
    await start(
      byRole({
        teller: (req) => {
          if (afterTool(req)) return { text: "" }
          if (req.lastUserText.includes("<task-results>")) return say(`report: ${/status="(\w+)"/.exec(req.lastUserText)?.[1]}`)
          return { toolCalls: [{ name: "delegate", args: { prompt: req.lastUserText } }] }
        },
        planner: (req) => {
          if (afterTool(req)) return { text: "planned" }
          if (req.lastUserText === "slow") return { hang: true }
          if (req.lastUserText === "watch the site") return { toolCalls: [{ name: "schedule", args: { prompt: "check the site", type: "scheduled", runAt: new Date(Date.now() + 1500).toISOString(), quiet: true } }] }
          return { toolCalls: [{ name: "schedule", args: { prompt: "hourly digest", type: "recurring", interval: 3600 } }] }
        },
        worker: () => ((worker.calls += 1), { text: "NO_REPORT" }),
      }),
    )
    expect(await answer("watch the site")).toBe("report: completed")
    const [quiet] = await app!.store.schedules.triggers()
    await api.waitFor(() => worker.calls > 0, 8000)
    await app!.supervisor.idle()
    await app!.supervisor.scheduler.settled()
    expect(await app!.store.schedules.firingsOf(quiet!.id)).toEqual([expect.objectContaining({ status: "ran", nothingToReport: true })])
    expect(textsIn()).toEqual(["report: completed"])

    await answer("every hour")
    const digest = (await app!.store.schedules.triggers()).find((t) => t.prompt === "hourly digest")!
    const prefix = digest.id.slice(0, 16)
    expect(await answer(`/pause ${prefix}`)).toBe(`Paused ${digest.id}: it will not run until you /resume it.`)
    expect(await answer("/tasks")).toContain(`${digest.id} — schedule (recurring), paused`)
    expect(await answer(`/resume ${prefix}`)).toMatch(new RegExp(`^Resumed ${digest.id}: next run .+\\. Runs missed while paused are not caught up\\.$`))

    api.pushUpdate(textUpdate(OWNER, OWNER, "slow"))
    const planner = await api.waitFor(() => app!.supervisor.tasks.openIn(`telegram:${OWNER}`).find((t) => t.status === "running"), 8000)
    expect(await answer("/stop")).toBe(`Stopped 1 task (${planner.id}). Schedules stay; /pause one to hold it.`)
    expect((await app!.store.task(planner.id))!.status).toBe("cancelled")
    expect(textsIn().at(-1)).toMatch(/^Stopped 1 task/)
  })

  it("sets the zone with /timezone; remembers, shows, corrects and forgets a fact, and the Teller's prompt follows memory.md", async () => {
    const memory = new Memory({ dir: join(dataDir, "memory"), scope: "user", watch: false })
    await start(byRole({ teller }), memory)
    try {
      expect(await answer("/timezone Europe/Berlin")).toMatch(/^Your time zone is now Europe\/Berlin/)
      expect(await answer("remember that I live in Berlin")).toBe('remember: {"path":"memory.md"}')
      expect(tellerEnvs().at(-1)).toMatch(/time zone Europe\/Berlin/)
      expect(await answer("/memory")).toMatch(/memory\.md:\n\d{4}-\d\d-\d\d\n\nThe user lives in Berlin\./)
      expect(await answer("hi")).toBe("ok")
      expect(tellerSystems().at(-1)).toContain("\n<memory>\n")
      expect(tellerSystems().at(-1)).toContain("The user lives in Berlin.")

      const corrected = await answer("I moved to Munich")
      expect(JSON.parse(corrected.slice("forget: ".length))).toEqual({ changes: [{ path: "memory.md", removed: ["The user lives in Berlin."], added: "The user lives in Munich." }] })
      expect(await answer("/memory")).toContain("The user lives in Munich.")

      const forgotten = await answer("forget where I live")
      expect(JSON.parse(forgotten.slice("forget: ".length))).toEqual({ changes: [{ path: "memory.md", removed: ["The user lives in Munich."] }] })
      expect(readFileSync(join(memory.folder(`telegram:${OWNER}`), "memory.md"), "utf8")).toBe("")
      expect(await answer("/memory")).toBe("I have no notes about you yet.")
      await answer("hi")
      expect(tellerSystems().at(-1)).not.toContain("\n<memory>\n")
      expect(existsSync(join(memory.folder(`telegram:${OWNER}`), "memory.md"))).toBe(true)
    } finally {
      await memory.close()
    }
  })
})
