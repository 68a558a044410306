import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pino from "pino"
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { SlackChannel } from "../../adapters/slack/slack.ts"
import { TelegramChannel } from "../../adapters/telegram/telegram.ts"
import type { Channel } from "../../src/channel/channel.ts"
import { loadConfig, type Config } from "../../src/config/config.ts"
import { startApp, type App } from "../../src/app.ts"
import { startModelServer, type ModelServer, type Script } from "../fakes/model-server.ts"
import { startSearchApi, type FakeSearchApi } from "../fakes/search-api.ts"
import { dmEvent, eventCallback, EventSender, startSlackApi, type SlackApi } from "../fakes/slack-api.ts"
import { startTelegramApi, textUpdate, type TelegramApi } from "../fakes/telegram-api.ts"
import { mcpConfigFile, stdioServer } from "../mcp/support.ts"
import { calling, chain, scriptedEnv, slackEnv, telegramEnv } from "../support/e2e.ts"
import { ListMemory } from "../support/harness.ts"

// Workers reach out on the real channels: a message comes in through the fake Telegram Bot API
// (real grammY) or as a signed Slack event (real Bolt over HTTP), the scripted model makes
// Teller → Planner → Worker call an MCP tool of the fake stdio server or web_search against the
// fake SearXNG, and the answer the platform shows carries what the tool returned.

const TELEGRAM_OWNER = 1001
const SLACK_OWNER = "U0OWNER"
const SLACK_OWNER_DM = "D0OWNER"

/** The two ways a Worker reaches out, each with its model script, settings and the text its result must show. */
const reaches = {
  "an MCP tool": {
    worker: () => calling("fake_echo", { text: "hello from MCP" }),
    env: (): Record<string, string> => ({ MCP_CONFIG: mcpConfigFile({ fake: stdioServer() }) }),
    shows: "fake_echo said",
    result: '{"text":"echo: hello from MCP"}',
  },
  web_search: {
    worker: () => calling("web_search", { query: "steward mcp", limit: 1 }),
    env: (): Record<string, string> => ({ SEARCH_PROVIDER: "searxng", SEARXNG_URL: search.url }),
    shows: "web_search said",
    result: '[{"title":"steward mcp result 1","url":"https://example.com/steward%20mcp/1","snippet":"About steward mcp ',
  },
} as const
type Reach = keyof typeof reaches

let search: FakeSearchApi
let server: ModelServer | undefined
let app: App | undefined
let dataDir: string

beforeAll(async () => void (search = await startSearchApi()))
afterAll(() => search.close())

beforeEach(() => void (dataDir = mkdtempSync(join(tmpdir(), "steward-reach-channels-"))))

afterEach(async () => {
  await app?.stop()
  app = undefined
  await server?.close()
  server = undefined
  rmSync(dataDir, { recursive: true, force: true })
})

/** Starts Steward in process with one real channel, the scripted model chain for `reach`, and its settings. */
async function startSteward(reach: Reach, platform: Record<string, string>, channelOf: (config: Config) => Channel): Promise<App> {
  const script: Script = chain(reaches[reach].worker())
  server = await startModelServer(script)
  const config = loadConfig({
    ...scriptedEnv(dataDir, server.url),
    ...platform,
    ...reaches[reach].env(),
  })
  app = await startApp(config, log(), [channelOf(config)], new ListMemory(), undefined, { hooksHost: "127.0.0.1", hooksPort: 0 })
  return app
}

const log = () => pino({ level: process.env.STEWARD_TEST_LOG ?? "silent" }, pino.destination(2))

/** The answer carries the Worker's words and the tool's result. */
function expectResultIn(answer: string, reach: Reach): void {
  expect(answer).toMatch(/^Result: /)
  expect(answer).toContain(reaches[reach].shows)
  expect(answer).toContain(reaches[reach].result)
}

describe("Workers reach out on Telegram (real grammY, fake Bot API)", () => {
  let api: TelegramApi
  beforeEach(async () => void (api = await startTelegramApi()))
  afterEach(() => api.close())

  it.each(["an MCP tool", "web_search"] as const)("puts the result of %s in the answer sent to the chat", async (reach) => {
    const platform = { ALLOWED_USERS: `telegram:${TELEGRAM_OWNER}`, ...telegramEnv(api) }
    const steward = await startSteward(reach, platform, (config) => new TelegramChannel({ ...config.telegram, botToken: api.token }, log()))
    api.pushUpdate(textUpdate(TELEGRAM_OWNER, TELEGRAM_OWNER, "reach out"))
    const answer = await api.waitFor(() => api.sent.find((message) => message.chat.id === TELEGRAM_OWNER && message.text?.startsWith("Result:")), 20_000)
    expectResultIn(answer.text!, reach)
    await steward.supervisor.idle()
    if (reach === "an MCP tool") expect(steward.mcp?.status()[0]).toMatchObject({ name: "fake", state: "running" })
    else expect(search.searches.at(-1)?.query).toBe("steward mcp")
  })
})

describe("Workers reach out on Slack (real Bolt over HTTP, signed events, fake Web API)", () => {
  let api: SlackApi
  beforeEach(async () => void (api = await startSlackApi()))
  afterEach(() => api.close())

  it.each(["an MCP tool", "web_search"] as const)("puts the result of %s in the answer posted to the DM", async (reach) => {
    const platform = { ALLOWED_USERS: `slack:${SLACK_OWNER}`, ...slackEnv(api) }
    let channel!: SlackChannel
    const steward = await startSteward(reach, platform, (config) => (channel = new SlackChannel({ ...config.slack, botToken: api.botToken }, log(), { host: "127.0.0.1", port: 0 })))
    const sender = new EventSender(`http://127.0.0.1:${channel.httpPort}/slack/events`, api.signingSecret)
    expect((await sender.event(eventCallback(api.team, dmEvent(SLACK_OWNER, SLACK_OWNER_DM, "reach out")))).status).toBe(200)
    const answer = await api.waitFor(() => api.messages.find((message) => message.channel === SLACK_OWNER_DM && message.text.startsWith("Result:")), 20_000)
    expectResultIn(answer.text, reach)
    await steward.supervisor.idle()
    if (reach === "an MCP tool") expect(steward.mcp?.status()[0]).toMatchObject({ name: "fake", state: "running" })
    else expect(search.searches.at(-1)?.query).toBe("steward mcp")
  })
})
