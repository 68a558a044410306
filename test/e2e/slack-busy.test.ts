import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pino from "pino"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { SlackChannel } from "../../adapters/slack/slack.ts"
import { startApp, type App } from "../../src/app.ts"
import type { ChannelState } from "../../src/channel/channel.ts"
import { loadConfig, type Config } from "../../src/config/config.ts"
import { startModelServer, type ModelServer, type Script } from "../fakes/model-server.ts"
import { dmEvent, eventCallback, EventSender, startSlackApi, type SlackApi, type SlackEvent } from "../fakes/slack-api.ts"
import { delegating, heldReplying, scriptedEnv, slackEnv } from "../support/e2e.ts"
import { ListMemory } from "../support/harness.ts"

const OWNER = "U0OWNER"
const OWNER_DM = "D0OWNER"
/** The first sign of life comes this soon after the message, without waiting for the model. */
const FIRST_SIGN_MS = 1000

let api: SlackApi
let server: ModelServer | undefined
let dataDir: string
let app: App | undefined
let sender: EventSender
let held: ReturnType<typeof heldReplying>

beforeEach(async () => {
  api = await startSlackApi()
  dataDir = mkdtempSync(join(tmpdir(), "steward-slack-busy-"))
  held = heldReplying("Here you are.")
})

afterEach(async () => {
  held.release()
  await app?.stop()
  app = undefined
  await server?.close()
  server = undefined
  await api.close()
  rmSync(dataDir, { recursive: true, force: true })
})

async function start(script: Script = held.script, statusRenewMs?: number): Promise<App> {
  server ??= await startModelServer(script)
  const config = loadConfig({
    ...scriptedEnv(dataDir, server.url),
    ALLOWED_USERS: `slack:${OWNER}`,
    ...slackEnv(api),
  })
  const log = pino({ level: process.env.STEWARD_TEST_LOG ?? "silent" }, pino.destination(2))
  const channel = new SlackChannel({ ...config.slack, botToken: api.botToken }, log, { host: "127.0.0.1", port: 0, statusRenewMs, retryConfig: { retries: 2, minTimeout: 0, maxTimeout: 1 } })
  app = await startApp(config, log, [channel], new ListMemory())
  sender = new EventSender(`http://127.0.0.1:${channel.httpPort}/slack/events`, api.signingSecret)
  return app
}

/** Sends the event; resolves with when it was sent (`performance.now()`). */
async function send(event: SlackEvent): Promise<number> {
  const sentAt = performance.now()
  expect((await sender.event(eventCallback(api.team, event))).status).toBe(200)
  return sentAt
}

const callsOf = (method: string) => api.calls.filter((call) => call.method === method)
const reactionsOn = (event: SlackEvent) => [...(api.reactions.get(`${event.channel}:${event.ts}`) ?? [])]
const replyTexts = (channel = OWNER_DM) => api.messages.filter((message) => message.channel === channel).map((message) => message.text)

describe("Slack busy indicators end to end (real Bolt, fake Web API, a slow scripted model)", () => {
  it("puts 👀 on the user's message within a second, before the model answers, and removes it when the answer arrives", async () => {
    const steward = await start()
    const event = dmEvent(OWNER, OWNER_DM, "what is up?")
    const sentAt = await send(event)
    const added = await api.waitFor(() => callsOf("reactions.add")[0])
    expect(added.params).toMatchObject({ channel: OWNER_DM, timestamp: event.ts, name: "eyes" })
    expect(added.at - sentAt).toBeLessThan(FIRST_SIGN_MS)
    expect(held.answeredAt()).toBeUndefined()
    expect(reactionsOn(event)).toEqual(["eyes"])
    // Not an assistant thread: no status is tried in a DM's main conversation.
    expect(callsOf("assistant.threads.setStatus")).toEqual([])

    held.release()
    await api.waitFor(() => replyTexts().includes("Here you are."))
    await steward.supervisor.idle()
    await api.waitFor(() => reactionsOn(event).length === 0)
    expect(callsOf("reactions.remove").map((call) => call.params)).toEqual([expect.objectContaining({ channel: OWNER_DM, timestamp: event.ts, name: "eyes" })])
    expect(callsOf("reactions.remove")[0].at).toBeGreaterThan(held.answeredAt()!)
  })

  it("sets the assistant thread status in an assistant thread within a second, and clears it when the answer arrives", async () => {
    const steward = await start()
    const thread = "1700000500.000100"
    api.assistantThreads.add(`${OWNER_DM}:${thread}`)
    const sentAt = await send(dmEvent(OWNER, OWNER_DM, "help me plan", { thread_ts: thread }))
    const status = await api.waitFor(() => callsOf("assistant.threads.setStatus")[0])
    expect(status.params).toMatchObject({ channel_id: OWNER_DM, thread_ts: thread, status: "is thinking…" })
    expect(status.at - sentAt).toBeLessThan(FIRST_SIGN_MS)
    expect(held.answeredAt()).toBeUndefined()
    expect(api.threadStatus.get(`${OWNER_DM}:${thread}`)).toBe("is thinking…")

    held.release()
    await api.waitFor(() => api.messages.some((message) => message.thread_ts === thread && message.text === "Here you are."))
    await steward.supervisor.idle()
    await api.waitFor(() => !api.threadStatus.has(`${OWNER_DM}:${thread}`))
    expect(callsOf("reactions.add")).toEqual([])
  })

  it("sets the status again after Steward posts in the thread while work goes on, and every renewal period", async () => {
    let finish!: () => void
    const finished = new Promise<void>((resolve) => (finish = resolve))
    const steward = await start(
      delegating(async () => {
        await finished
        return { text: "Saved notes/late.md" }
      }),
      50,
    )
    const thread = "1700000550.000100"
    api.assistantThreads.add(`${OWNER_DM}:${thread}`)
    await send(dmEvent(OWNER, OWNER_DM, "write it down", { thread_ts: thread }))
    const thinking = () => callsOf("assistant.threads.setStatus").filter((call) => call.params.status === "is thinking…")
    // "On it." posted mid-work (which ends the status on Slack), and the renewal period passes.
    await api.waitFor(() => replyTexts().includes("On it."))
    await api.waitFor(() => thinking().length >= 3)
    expect(callsOf("assistant.threads.setStatus").every((call) => call.params.status === "is thinking…")).toBe(true)
    finish()
    await api.waitFor(() => replyTexts().includes("Done: Saved notes/late.md"))
    await steward.supervisor.idle()
    await api.waitFor(() => !api.threadStatus.has(`${OWNER_DM}:${thread}`))
    const cleared = callsOf("assistant.threads.setStatus").findIndex((call) => call.params.status === "")
    expect(callsOf("assistant.threads.setStatus").slice(cleared + 1)).toEqual([])
  })

  it("falls back to 👀 in a DM thread where Slack refuses the status, and does not ask again there", async () => {
    const steward = await start()
    const thread = "1700000600.000100"
    const first = dmEvent(OWNER, OWNER_DM, "first", { thread_ts: thread })
    const sentAt = await send(first)
    const added = await api.waitFor(() => callsOf("reactions.add")[0])
    expect(added.params).toMatchObject({ channel: OWNER_DM, timestamp: first.ts, name: "eyes" })
    expect(added.at - sentAt).toBeLessThan(FIRST_SIGN_MS)
    expect(callsOf("assistant.threads.setStatus")).toHaveLength(1) // answered not_allowed
    held.release()
    await steward.supervisor.idle()
    await api.waitFor(() => reactionsOn(first).length === 0)

    const second = dmEvent(OWNER, OWNER_DM, "second", { thread_ts: thread })
    await send(second)
    await api.waitFor(() => callsOf("reactions.add").length === 2)
    await steward.supervisor.idle()
    await api.waitFor(() => reactionsOn(second).length === 0)
    expect(callsOf("assistant.threads.setStatus")).toHaveLength(1)
  })

  it("falls back to 👀 when the app lacks the scope for the status", async () => {
    const steward = await start()
    const thread = "1700000700.000100"
    api.assistantThreads.add(`${OWNER_DM}:${thread}`)
    api.failNext("assistant.threads.setStatus", { error: "missing_scope" })
    const event = dmEvent(OWNER, OWNER_DM, "hello", { thread_ts: thread })
    await send(event)
    await api.waitFor(() => reactionsOn(event).includes("eyes"))
    held.release()
    await steward.supervisor.idle()
    await api.waitFor(() => reactionsOn(event).length === 0)
  })

  it("clears at the next start a reaction that a stop during the work left on the message", async () => {
    // The adapter is stopped while the core still reports work (the reaction stays) and a new
    // one starts on the same durable channel state, as after a restart: it removes the reaction.
    // (The channel state is the core's store in production; a map here, so the test exercises
    // the adapter's restore path alone.)
    const entries = new Map<string, unknown>()
    const state: ChannelState = {
      set: async (key, value) => void entries.set(key, value),
      delete: async (key) => void entries.delete(key),
      list: async <T>(prefix: string) => [...entries].filter(([key]) => key.startsWith(prefix)).sort().map(([key, value]) => ({ key, value: value as T })),
    }
    const log = pino({ level: "silent" })
    const config = { botToken: api.botToken, signingSecret: api.signingSecret, apiUrl: api.apiUrl, port: 0 } as Config["slack"] & { botToken: string }
    const first = new SlackChannel(config, log, { host: "127.0.0.1", port: 0, retryConfig: { retries: 0 } })
    // The core shows work as soon as it has the message, and never says it ended.
    await first.start({ onMessage: async (message) => first.activity(message.conversation, true), commands: [], state })
    sender = new EventSender(`http://127.0.0.1:${first.httpPort}/slack/events`, api.signingSecret)
    const event = dmEvent(OWNER, OWNER_DM, "a long job")
    await send(event)
    await api.waitFor(() => reactionsOn(event).includes("eyes"))
    await first.stop()
    expect(reactionsOn(event)).toEqual(["eyes"])

    const second = new SlackChannel(config, log, { host: "127.0.0.1", port: 0, retryConfig: { retries: 0 } })
    await second.start({ onMessage: async () => {}, commands: [], state })
    try {
      expect(reactionsOn(event)).toEqual([])
      expect([...entries.keys()]).toEqual([])
    } finally {
      await second.stop()
    }
  })
})
