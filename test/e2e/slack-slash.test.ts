import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pino from "pino"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { SlackChannel } from "../../adapters/slack/slack.ts"
import { startApp, type App } from "../../src/app.ts"
import { loadConfig } from "../../src/config/config.ts"
import { byRole, startModelServer, type ModelServer } from "../fakes/model-server.ts"
import { EventSender, startSlackApi, type SlackApi } from "../fakes/slack-api.ts"
import { ListMemory } from "../support/harness.ts"

const OWNER = "U0OWNER"
const OWNER_DM = "D0OWNER"

let api: SlackApi
let server: ModelServer
let app: App
let sender: EventSender
let dataDir: string

beforeEach(async () => {
  api = await startSlackApi()
  dataDir = mkdtempSync(join(tmpdir(), "steward-slack-slash-"))
  // Commands reach no model; a model call would fail the test with the script's error.
  server = await startModelServer(byRole({}))
  const config = loadConfig({ DATA_DIR: dataDir, MODEL: "openai-compatible:scripted", OPENAI_COMPATIBLE_BASE_URL: server.url, ALLOWED_USERS: `slack:${OWNER}`, SLACK_BOT_TOKEN: api.botToken, SLACK_SIGNING_SECRET: api.signingSecret, SLACK_API_URL: api.apiUrl })
  const log = pino({ level: process.env.STEWARD_TEST_LOG ?? "silent" }, pino.destination(2))
  const channel = new SlackChannel({ ...config.slack, botToken: api.botToken }, log, { host: "127.0.0.1", port: 0, retryConfig: { retries: 0 } })
  app = await startApp(config, log, [channel], new ListMemory())
  sender = new EventSender(`http://127.0.0.1:${channel.httpPort}/slack/events`, api.signingSecret)
})

afterEach(async () => {
  await app.stop()
  await server.close()
  await api.close()
  rmSync(dataDir, { recursive: true, force: true })
})

const slash = (text: string, channel = OWNER_DM) => sender.command({ command: "/steward", text, user_id: OWNER, channel_id: channel, team_id: api.team })
const dmTexts = () => api.messages.filter((message) => message.channel === OWNER_DM).map((message) => message.text)

describe("the /steward slash command (real Bolt over HTTP, signed requests, fake Web API)", () => {
  it("runs a chat command: /steward tasks answers in the DM as /tasks does", async () => {
    const delivery = await slash("tasks")
    expect([delivery.status, delivery.body]).toEqual([200, ""])
    const [answer] = await api.waitFor(() => (dmTexts().length > 0 ? dmTexts() : undefined))
    expect(answer).toBe("No tasks are queued or running, and there are no schedules.")
  })

  it("typed in a channel, acknowledges there and answers in the user's DM", async () => {
    const delivery = await slash("new", "C0GENERAL")
    expect(delivery.status).toBe(200)
    expect(JSON.parse(delivery.body)).toEqual({ response_type: "ephemeral", text: "I'll answer in our DM." })
    expect(await api.waitFor(() => dmTexts()[0])).toBe("Started a fresh conversation. What I remembered is still there.")
    expect(api.calls.some((call) => call.method === "conversations.open" && call.params.users === OWNER)).toBe(true)
  })

  it("/steward and /steward help list the subcommands, from the commands the core has", async () => {
    for (const text of ["", "help"]) {
      const delivery = await slash(text)
      const body = JSON.parse(delivery.body) as { response_type: string; text: string }
      expect(body.response_type).toBe("ephemeral")
      for (const name of ["tasks", "cancel", "new", "help"]) expect(body.text).toContain(`\`/steward ${name}\``)
    }
    expect(dmTexts()).toEqual([])
  })

  it("refuses an unsigned slash command, and answers Slack's ssl_check", async () => {
    const forged = await sender.command({ command: "/steward", text: "tasks", user_id: OWNER, channel_id: OWNER_DM, team_id: api.team }, { signingSecret: "wrong" })
    expect(forged.status).toBe(401)
    expect((await sender.post("ssl_check=1&token=x", "application/x-www-form-urlencoded")).status).toBe(200)
  })

  it("matches the manifest's slash command", () => {
    const manifest = JSON.parse(readFileSync(new URL("../../deploy/slack-manifest.json", import.meta.url), "utf8")) as { features: { slash_commands: Array<{ command: string }> } }
    expect(manifest.features.slash_commands.map((command) => command.command)).toEqual(["/steward"])
  })
})
