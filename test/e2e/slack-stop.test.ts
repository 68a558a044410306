import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { freePort } from "../../scripts/free-port.mjs"
import { byRole, startModelServer, type ModelServer, type Script } from "../fakes/model-server.ts"
import { blockActions, dmEvent, eventCallback, EventSender, startSlackApi, type SlackApi, type SlackMessage } from "../fakes/slack-api.ts"
import { chain, firstReport, scriptedEnv, slackEnv, untilWhileRunning } from "../support/e2e.ts"
import { StewardProcess } from "../support/process.ts"
import { afterTool, say } from "../support/scripts.ts"
import { endPlatformTest, platformTest } from "../support/platform-test.ts"

/**
 * Work you can watch and messages seen at once, on Slack, with the built program over HTTP
 * (signed events and interactivity) against the fake Web API.
 */

const OWNER = "U0OWNER"
const OWNER_DM = "D0OWNER"
/** Allowed (ALLOWED_USERS has *), no owner: another person, who may not stop the owner's work. */
const OTHER = "U0OTHER"
const PROMPT = "count every grain of sand on the beach"

let api: SlackApi
let models: ModelServer | undefined
let dataDir: string
let steward: StewardProcess | undefined

beforeEach(async () => ({ api, dataDir } = await platformTest(startSlackApi, "slack-stop")))
afterEach(async () => {
  await endPlatformTest({ api, dataDir }, { steward, models })
  steward = models = undefined
})

/** Starts the program with the Events API on a free port (SLACK_PORT takes no 0). */
async function start(script: Script): Promise<{ running: StewardProcess; sender: EventSender }> {
  models = await startModelServer(script)
  const port = await freePort()
  const running = StewardProcess.start({ ...scriptedEnv(dataDir, models.url), ...slackEnv(api), ALLOWED_USERS: `*,slack:${OWNER}`, SLACK_PORT: String(port), LOG_LEVEL: "info" })
  steward = running
  await running.waitFor(() => running.logs.some((line) => line.msg === "receiving Slack events over HTTP"), "the Events API listening", 30_000)
  return { running, sender: new EventSender(`http://127.0.0.1:${port}/slack/events`, api.signingSecret) }
}

const dm = (text: string) => eventCallback(api.team, dmEvent(OWNER, OWNER_DM, text))
const status = () => api.messages.find((message) => message.channel === OWNER_DM && message.text.startsWith(`⚙️ *${PROMPT}*`))
const buttonsOf = (message: SlackMessage) => message.blocks?.filter((block) => block.type === "actions").flatMap((block) => block.elements ?? []) ?? []
const replies = () => api.messages.filter((message) => message.channel === OWNER_DM && !message.text.startsWith("⚙️")).map((message) => message.text)
const report = () => firstReport(models!)

describe("Slack: a status message with a Stop button (the built program)", () => {
  it("shows title, elapsed time and a Block Kit Stop button; another user's signed press gets a note; the owner's stops the work, the Teller hears of it and the button goes", async () => {
    let workerRuns = 0
    const { running, sender } = await start(chain(() => (workerRuns++, { hang: true })))
    expect((await sender.event(dm(PROMPT))).status).toBe(200)
    const shown = await untilWhileRunning(running, "the status message", () => status(), 30_000)
    expect(shown.text).toMatch(new RegExp(`^⚙️ \\*${PROMPT}\\*\\n_Working for \\d+ s_`))
    expect(buttonsOf(shown).map((button) => button.text?.text)).toEqual(["Stop"])

    const forged = await sender.action(blockActions(api.team, OTHER, shown, "Stop"))
    expect(forged.status).toBe(200)
    const note = await untilWhileRunning(running, "the note to the other user", () => api.ephemerals.find((ephemeral) => ephemeral.user === OTHER))
    expect(note.text).toBe("Someone else asked for this task; only they can stop it.")
    expect(buttonsOf(status()!)).toHaveLength(1)
    expect(report()).toBeUndefined()

    expect((await sender.action(blockActions(api.team, OWNER, status()!, "Stop"))).status).toBe(200)
    await untilWhileRunning(running, "the Teller's report of the stopped work", () => replies().some((text) => text.startsWith("Result:")))
    expect(report()).toContain("stopped by the user (Stop button)")
    const ended = await untilWhileRunning(running, "the status saying it stopped", () => (status()?.text.includes("Stopped after") ? status() : undefined))
    expect(ended.ts).toBe(shown.ts)
    expect(buttonsOf(ended)).toEqual([])
    expect(api.ephemerals.filter((ephemeral) => ephemeral.user === OWNER)).toEqual([])
    expect(workerRuns).toBe(1)
  }, 90_000)
})

describe("Slack: a message that arrives while a turn runs (the built program)", () => {
  it("gets 👀 (reactions.add) within a second, and its answer after the running one", async () => {
    let release!: () => void
    const released = new Promise<void>((resolve) => (release = resolve))
    let entered!: () => void
    const holding = new Promise<void>((resolve) => (entered = resolve))
    const teller: Script = async (req) => {
      if (afterTool(req)) return { text: "" }
      if (req.lastUserText.includes("second")) return say("answer to second")
      entered()
      await released
      return say("answer to first")
    }
    const { sender } = await start(byRole({ teller }))
    expect((await sender.event(dm("first"))).status).toBe(200)
    await holding
    const second = dm("second")
    const sentAt = performance.now()
    expect((await sender.event(second)).status).toBe(200)
    const reacted = await untilWhileRunning(steward!, "the reaction on the queued message", () => api.calls.find((call) => call.method === "reactions.add" && call.params.timestamp === second.event.ts))
    expect(reacted.at - sentAt).toBeLessThan(1000)
    expect(reacted.params).toMatchObject({ channel: OWNER_DM, name: "eyes" })
    expect(replies()).toEqual([])
    release()
    await untilWhileRunning(steward!, "both answers", () => replies().length === 2)
    expect(replies()).toEqual(["answer to first", "answer to second"])
  }, 60_000)
})
