import { join } from "node:path"
import pino from "pino"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { renderSlack, SLACK_LIMIT } from "../../adapters/slack/render.ts"
import { SlackChannel } from "../../adapters/slack/slack.ts"
import { startApp, type App } from "../../src/app.ts"
import { loadConfig } from "../../src/config/config.ts"
import { byRole, startModelServer, type ModelServer, type Reply, type Script } from "../fakes/model-server.ts"
import { dmEvent, eventCallback, EventSender, mentionEvent, startSlackApi, type SlackApi, type SlackEvent } from "../fakes/slack-api.ts"
import { scriptedEnv, slackEnv, untilWhileRunning, liveAnswerOnRecord } from "../support/e2e.ts"
import { ListMemory } from "../support/harness.ts"
import { StewardProcess } from "../support/process.ts"
import { afterTool } from "../support/scripts.ts"
import { endPlatformTest, platformTest } from "../support/platform-test.ts"

const OWNER = "U0OWNER"
const OWNER_DM = "D0OWNER"
const ANSWER = "Here is **the answer** you asked for. " + Array.from({ length: 12 }, (_, i) => `Sentence ${i + 1} of a long answer.`).join(" ")
/** The answer as Steward renders it for Slack today (mrkdwn). */
const RENDERED = renderSlack(ANSWER, SLACK_LIMIT)[0]!

let api: SlackApi
let server: ModelServer | undefined
let dataDir: string
let app: App | undefined
let sender: EventSender

beforeEach(async () => ({ api, dataDir } = await platformTest(startSlackApi, "slack-live")))
afterEach(async () => {
  await endPlatformTest({ api, dataDir }, { app, models: server })
  app = server = undefined
})

const env = (extra: Record<string, string> = {}) => ({ ...scriptedEnv(dataDir, server!.url), ALLOWED_USERS: `slack:${OWNER}`, ...slackEnv(api), ...extra })

async function start(script: Script): Promise<App> {
  server = await startModelServer(script)
  const config = loadConfig(env())
  const log = pino({ level: process.env.STEWARD_TEST_LOG ?? "silent" }, pino.destination(2))
  const channel = new SlackChannel({ ...config.slack, botToken: api.botToken }, log, { host: "127.0.0.1", port: 0, retryConfig: { retries: 0 } })
  app = await startApp(config, log, [channel], new ListMemory())
  sender = new EventSender(`http://127.0.0.1:${channel.httpPort}/slack/events`, api.signingSecret)
  return app
}

const send = async (event: SlackEvent) => expect((await sender.event(eventCallback(api.team, event))).status).toBe(200)
const answering = (reply: Reply): Script => byRole({ teller: (req) => (afterTool(req) ? { text: "" } : reply) })
const replyOf = (text: string, chunks: number, overMs: number): Reply => ({ toolCalls: [{ name: "reply", args: { text } }], pace: { chunks, overMs } })
const callsOf = (method: string) => api.calls.filter((call) => call.method === method)

describe("Slack live answers (real Bolt, fake Web API, a model that streams)", () => {
  it("streams a reply in an assistant thread (startStream, appendStream, stopStream) and ends it as the rendered answer", async () => {
    const steward = await start(answering(replyOf(ANSWER, 20, 2000)))
    const thread = "1700000500.000100"
    api.assistantThreads.add(`${OWNER_DM}:${thread}`)
    await send(dmEvent(OWNER, OWNER_DM, "tell me", { thread_ts: thread }))
    await api.waitFor(() => callsOf("chat.stopStream").length === 1, 30_000)
    await steward.supervisor.idle()
    const started = callsOf("chat.startStream")
    expect(started).toHaveLength(1)
    expect(started[0]!.params).toMatchObject({ channel: OWNER_DM, thread_ts: thread })
    expect(callsOf("chat.appendStream").length).toBeGreaterThanOrEqual(2)
    // What was streamed is the answer's text as it was written.
    const streamed = String(started[0]!.params.markdown_text) + callsOf("chat.appendStream").map((call) => String(call.params.markdown_text)).join("")
    expect(ANSWER.startsWith(streamed)).toBe(true)
    const inThread = api.messages.filter((message) => message.thread_ts === thread)
    expect(inThread.map((message) => message.text)).toEqual([RENDERED])
    expect(inThread[0]!.streaming).toBe(false)
    expect(callsOf("chat.postMessage")).toEqual([])
  })

  it("streams in a channel thread with its recipient", async () => {
    const steward = await start(answering(replyOf(ANSWER, 10, 1000)))
    const mention = mentionEvent(OWNER, "C0TEAM", "tell me")
    await send(mention)
    await api.waitFor(() => callsOf("chat.stopStream").length === 1, 30_000)
    await steward.supervisor.idle()
    expect(callsOf("chat.startStream")[0]!.params).toMatchObject({ channel: "C0TEAM", recipient_user_id: OWNER, recipient_team_id: api.team })
    expect(api.messages.filter((message) => message.channel === "C0TEAM").map((message) => message.text)).toEqual([RENDERED])
  })

  it("in a top-level DM posts one message and updates it at most once a second, ending on the rendered answer", async () => {
    const steward = await start(answering(replyOf(ANSWER, 30, 3000)))
    await send(dmEvent(OWNER, OWNER_DM, "tell me"))
    await api.waitFor(() => callsOf("chat.postMessage").length === 1, 30_000)
    await steward.supervisor.idle()
    expect(callsOf("chat.startStream")).toEqual([])
    expect(callsOf("chat.postMessage")).toHaveLength(1)
    const updates = callsOf("chat.update")
    expect(updates.length).toBeGreaterThanOrEqual(3)
    const growing = updates.slice(0, -1)
    for (let i = 1; i < growing.length; i++) expect(growing[i]!.at - growing[i - 1]!.at).toBeGreaterThanOrEqual(950)
    expect(api.messages.filter((message) => message.channel === OWNER_DM).map((message) => message.text)).toEqual([RENDERED])
  })

  it("falls back to a growing message when the stream is refused", async () => {
    api.failNext("chat.startStream", { error: "not_allowed" })
    const steward = await start(answering(replyOf(ANSWER, 20, 2000)))
    const thread = "1700000600.000100"
    await send(dmEvent(OWNER, OWNER_DM, "tell me", { thread_ts: thread }))
    await api.waitFor(() => callsOf("chat.postMessage").length === 1, 30_000)
    await steward.supervisor.idle()
    expect(api.messages.filter((message) => message.thread_ts === thread).map((message) => message.text)).toEqual([RENDERED])
    expect(callsOf("chat.postMessage")).toHaveLength(1)
  })
})

describe("Slack assistant container (real Bolt, fake Web API)", () => {
  it("suggests prompts when an assistant thread starts, titles it after its first answer and takes a context change", async () => {
    const steward = await start(answering(replyOf("Sure, here is a plan.", 2, 100)))
    const thread = "1700000800.000100"
    const assistantThread = { user_id: OWNER, channel_id: OWNER_DM, thread_ts: thread, context: { channel_id: "C0TEAM", team_id: api.team } }
    const startedAt = performance.now()
    await send({ type: "assistant_thread_started", assistant_thread: assistantThread, ts: thread, channel: OWNER_DM } as unknown as SlackEvent)
    const prompts = await api.waitFor(() => api.suggestedPrompts.get(`${OWNER_DM}:${thread}`))
    expect(performance.now() - startedAt).toBeLessThan(3000)
    expect(prompts.length).toBeGreaterThanOrEqual(1)
    expect(prompts.length).toBeLessThanOrEqual(4)

    await send({ type: "assistant_thread_context_changed", assistant_thread: { ...assistantThread, context: { channel_id: "C0OTHER", team_id: api.team } }, ts: thread, channel: OWNER_DM } as unknown as SlackEvent)
    await send(dmEvent(OWNER, OWNER_DM, "Plan my trip to Lisbon", { thread_ts: thread }))
    await send(dmEvent(OWNER, OWNER_DM, "and book nothing yet", { thread_ts: thread }))
    expect(await api.waitFor(() => api.threadTitles.get(`${OWNER_DM}:${thread}`), 30_000)).toBe("Plan my trip to Lisbon")
    await steward.supervisor.idle()
    expect(callsOf("assistant.threads.setTitle")).toHaveLength(1)
  })
})

describe("Slack live answers across a crash", () => {
  let steward: StewardProcess | undefined
  afterEach(async () => {
    await steward?.kill("SIGKILL")
    steward = undefined
  })

  it("stops the stream a SIGKILL left open, saying it was interrupted, and sends exactly one complete answer after the restart", async () => {
    let release!: () => void
    const hold = new Promise((resolve) => (release = resolve as () => void))
    let tellerCalls = 0
    server = await startModelServer(
      byRole({
        teller: (req) => {
          if (afterTool(req)) return { text: "" }
          tellerCalls++
          return { toolCalls: [{ name: "reply", args: { text: ANSWER } }], pace: tellerCalls === 1 ? { chunks: 20, overMs: 2000, holdAfter: 8, hold } : { chunks: 4, overMs: 200 } }
        },
      }),
    )
    // Socket Mode: the program connects out to the fake, so nothing listens beyond 127.0.0.1.
    const socketEnv = env({ SLACK_APP_TOKEN: api.appToken })
    steward = StewardProcess.start(socketEnv)
    await untilWhileRunning(steward, "the Socket Mode connection", () => api.socket.connections.length === 1, 40_000)
    const thread = "1700000700.000100"
    api.socket.sendEvent(eventCallback(api.team, dmEvent(OWNER, OWNER_DM, "tell me", { thread_ts: thread })))
    const open = await untilWhileRunning(steward, "the open stream", () => api.messages.find((message) => message.thread_ts === thread && message.streaming && message.text.length > 0), 40_000)
    await liveAnswerOnRecord(dataDir, "slack")
    expect(await steward.kill("SIGKILL")).toBe(null)
    release()

    steward = StewardProcess.start(socketEnv)
    await untilWhileRunning(steward, "the complete answer", () => api.messages.some((message) => message.thread_ts === thread && message.text === RENDERED), 40_000)
    const left = api.messages.find((message) => message.ts === open.ts)!
    expect(left.streaming).toBe(false)
    expect(left.text).toMatch(/interrupted — the full answer follows/)
    expect(api.messages.filter((message) => message.thread_ts === thread && message.text === RENDERED)).toHaveLength(1)
    expect(await steward.kill("SIGTERM")).toBe(0)
  }, 120_000)
})
