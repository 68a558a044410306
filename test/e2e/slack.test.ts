import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pino from "pino"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { SlackChannel } from "../../adapters/slack/slack.ts"
import { startApp, type App } from "../../src/app.ts"
import type { InboundMessage } from "../../src/core/types.ts"
import { loadConfig } from "../../src/config/config.ts"
import { byRole, startModelServer, type ModelServer, type Script } from "../fakes/model-server.ts"
import { blockActions, dmEvent, eventCallback, EventSender, startSlackApi, type SlackApi, type SlackMessage } from "../fakes/slack-api.ts"
import { asking, delegating, hangingOnce, replying, untilWhileRunning, writingWorker } from "../support/e2e.ts"
import { ListMemory } from "../support/harness.ts"
import { StewardProcess } from "../support/process.ts"

const OWNER = "U0OWNER"
const OWNER_DM = "D0OWNER"
const STRANGER = "U0STRANGER"
const STRANGER_DM = "D0STRANGER"

/** What Steward shows in a DM now, status messages left out. */
const repliesIn = (api: SlackApi, channel: string) => api.messages.filter((message) => message.channel === channel && !message.text.startsWith("⚙️"))
const textsIn = (api: SlackApi, channel: string) => repliesIn(api, channel).map((message) => message.text)

let api: SlackApi
let server: ModelServer | undefined
let dataDir: string

beforeEach(async () => {
  api = await startSlackApi()
  dataDir = mkdtempSync(join(tmpdir(), "steward-slack-e2e-"))
})

afterEach(async () => {
  await server?.close()
  server = undefined
  await api.close()
  rmSync(dataDir, { recursive: true, force: true })
})

const env = (extra: Record<string, string> = {}) => ({
  DATA_DIR: dataDir,
  MODEL: "openai-compatible:scripted",
  OPENAI_COMPATIBLE_BASE_URL: server!.url,
  MODEL_MAX_RETRIES: "1",
  ALLOWED_USERS: `slack:${OWNER}`,
  SLACK_BOT_TOKEN: api.botToken,
  SLACK_SIGNING_SECRET: api.signingSecret,
  SLACK_API_URL: api.apiUrl,
  // These tests read each message as posted; a DM's answer growing in place is slack-live.test.ts's.
  STREAM_REPLIES: "off",
  ...extra,
})

const dm = (user: string, channel: string, text: string) => eventCallback(api.team, dmEvent(user, channel, text))

describe("the fake Slack Web API", () => {
  it("answers blocks that are not JSON as Slack does: HTTP 200 with invalid_blocks_format, nothing posted", async () => {
    const post = (blocks: string) =>
      fetch(`${api.apiUrl}chat.postMessage`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", authorization: `Bearer ${api.botToken}` },
        body: new URLSearchParams({ channel: OWNER_DM, text: "hi", blocks }),
      })
    const malformed = await post('[{"type": "section"')
    expect(malformed.status).toBe(200)
    expect(await malformed.json()).toEqual({ ok: false, error: "invalid_blocks_format" })
    expect(await (await post('{"type": "section"}')).json()).toEqual({ ok: false, error: "invalid_blocks_format" })
    expect(await (await post("[null]")).json()).toEqual({ ok: false, error: "invalid_blocks" })
    const badJson = await fetch(`${api.apiUrl}chat.postMessage`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${api.botToken}` }, body: '{"channel": ' })
    expect([badJson.status, await badJson.json()]).toEqual([200, { ok: false, error: "invalid_json" }])
    expect(api.messages).toEqual([])
  })
})

describe("Slack over HTTP under a burst (real Bolt, the adapter's receiver, fake Web API)", () => {
  let channel: SlackChannel | undefined

  afterEach(async () => {
    await channel?.stop()
    channel = undefined
  })

  async function startChannel(onMessage: (message: InboundMessage) => Promise<void>): Promise<EventSender> {
    const config = { botToken: api.botToken, signingSecret: api.signingSecret, port: 3000, apiUrl: api.apiUrl }
    channel = new SlackChannel(config, pino({ level: "silent" }), { host: "127.0.0.1", port: 0 })
    await channel.start({ onMessage, commands: [] })
    return new EventSender(`http://127.0.0.1:${channel.httpPort}/slack/events`, api.signingSecret)
  }

  it("hands each conversation's events to the core in the order they arrived, across held bursts", async () => {
    const received: InboundMessage[] = []
    const sender = await startChannel(async (message) => void received.push(message))
    // Four conversations at once, each sending its next message when the last was acknowledged:
    // within a conversation the arrival order is known, and the events span several releases.
    const conversations = ["D0A", "D0B", "D0C", "D0D"]
    const PER_CONVERSATION = 30
    await Promise.all(
      conversations.map(async (dmChannel) => {
        for (let n = 0; n < PER_CONVERSATION; n++) expect((await sender.event(dm(OWNER, dmChannel, `${dmChannel} ${n}`))).status).toBe(200)
      }),
    )
    await api.waitFor(() => received.length === conversations.length * PER_CONVERSATION)
    for (const dmChannel of conversations) {
      const texts = received.filter((message) => message.conversation === `slack:${api.team}:${dmChannel}`).map((message) => message.text)
      expect(texts).toEqual(Array.from({ length: PER_CONVERSATION }, (_, n) => `${dmChannel} ${n}`))
    }
  })

  it("stops only once every acknowledged event of a burst has been taken by the core", async () => {
    const taken: string[] = []
    const sender = await startChannel(async (message) => {
      await new Promise((resolve) => setTimeout(resolve, 1))
      taken.push(String(message.eventId))
    })
    const bodies = Array.from({ length: 100 }, (_, n) => dm(OWNER, `D0${n}`, `burst ${n}`))
    const deliveries = await Promise.all(bodies.map((body) => sender.event(body)))
    expect(deliveries.every((delivery) => delivery.status === 200)).toBe(true)
    // At once: the burst is still held or being handed over; Slack will not send it again.
    await channel!.stop()
    channel = undefined
    expect(taken.sort()).toEqual(bodies.map((body) => `slack:${body.event_id}`).sort())
  })
})

describe("Slack end to end (Steward in process, real Bolt over HTTP, fake Web API, scripted model over HTTP)", () => {
  let app: App | undefined
  let sender: EventSender

  afterEach(async () => {
    await app?.stop()
    app = undefined
  })

  async function start(script: Script): Promise<App> {
    server = await startModelServer(script)
    const config = loadConfig(env())
    const log = pino({ level: process.env.STEWARD_TEST_LOG ?? "silent" }, pino.destination(2))
    const channel = new SlackChannel({ ...config.slack, botToken: api.botToken }, log, { host: "127.0.0.1", port: 0, progressEditIntervalMs: 100, statusAfterMs: 0, retryConfig: { retries: 2, minTimeout: 0, maxTimeout: 1 } })
    app = await startApp(config, log, [channel], new ListMemory())
    sender = new EventSender(`http://127.0.0.1:${channel.httpPort}/slack/events`, api.signingSecret)
    return app
  }

  /** Resolves with the DM's replies once there are `count` of them. */
  const replies = (count: number, channel = OWNER_DM, timeoutMs = 10_000) => api.waitFor(() => (repliesIn(api, channel).length >= count ? repliesIn(api, channel) : undefined), timeoutMs)

  it("answers hello in the DM", async () => {
    const steward = await start(byRole({ teller: replying("Hello! *How* can I help?") }))
    expect((await sender.event(dm(OWNER, OWNER_DM, "hello"))).status).toBe(200)
    expect((await replies(1)).map((message) => message.text)).toEqual(["Hello! _How_ can I help?"])
    await steward.supervisor.idle()
  })

  it("runs a delegate round trip with one status message, posted with a Stop button and ended saying it is done", async () => {
    const steward = await start(delegating(writingWorker))
    await sender.event(dm(OWNER, OWNER_DM, "cats"))
    await replies(2)
    await steward.supervisor.idle()
    expect(textsIn(api, OWNER_DM)).toEqual(["On it.", "Done: Saved notes/cats.md"])
    const posted = api.calls.filter((call) => call.method === "chat.postMessage" && String(call.params.text).startsWith("⚙️ *Write a note about: cats*"))
    expect(posted).toHaveLength(1)
    expect(JSON.stringify(posted[0]!.params.blocks)).toContain("Stop")
    const ended = await api.waitFor(() => api.messages.find((message) => message.text.startsWith("⚙️") && message.text.includes("Done after")))
    expect(ended.blocks?.some((block) => block.type === "actions")).toBe(false)
  })

  it("answers an event delivered twice (Slack's retry) once", async () => {
    const steward = await start(byRole({ teller: replying("Only once.") }))
    const event = dm(OWNER, OWNER_DM, "hello")
    expect((await sender.event(event)).status).toBe(200)
    expect((await sender.event(event, { retryNum: 1 })).status).toBe(200)
    await replies(1)
    await steward.supervisor.idle()
    expect(textsIn(api, OWNER_DM)).toEqual(["Only once."])
    expect(server!.requests.filter((request) => request.role === "teller")).toHaveLength(1) // the reply ends the turn: no step after it
  })

  it("never lets a stranger reach a model", async () => {
    const steward = await start(byRole({ teller: replying("secret") }))
    await sender.event(dm(STRANGER, STRANGER_DM, "let me in"))
    // The stranger is told how to be approved (a pairing code), by Steward itself.
    await replies(1, STRANGER_DM)
    await steward.supervisor.idle()
    expect(server!.requests).toEqual([])
    expect(textsIn(api, STRANGER_DM).join()).not.toContain("secret")
  })

  it("sends a reply once after a 429", async () => {
    const steward = await start(byRole({ teller: replying("Rate limits are fine.") }))
    api.failNext("chat.postMessage", { status: 429, retryAfter: 1 })
    await sender.event(dm(OWNER, OWNER_DM, "hello"))
    expect((await replies(1)).map((message) => message.text)).toEqual(["Rate limits are fine."])
    await steward.supervisor.idle()
    expect(api.calls.filter((call) => call.method === "chat.postMessage" && call.params.text === "Rate limits are fine.")).toHaveLength(2)
  })

  it("delivers a 10,000-character reply complete, in order, every part under Slack's limit", async () => {
    const paragraphs = Array.from({ length: 150 }, (_, n) => `Paragraph ${n} of the long answer, with enough words to make it a real line.`)
    const steward = await start(byRole({ teller: replying(paragraphs.join("\n\n")) }))
    await sender.event(dm(OWNER, OWNER_DM, "tell me everything"))
    await api.waitFor(() => textsIn(api, OWNER_DM).join("\n\n").includes("Paragraph 149 "))
    await steward.supervisor.idle()
    const parts = textsIn(api, OWNER_DM)
    expect(parts.length).toBeGreaterThanOrEqual(4)
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(3000)
    expect(parts.join("\n\n")).toBe(paragraphs.join("\n\n"))
  })

  describe("ask_user", () => {
    const question = () => api.waitFor(() => api.messages.find((message) => message.text.startsWith("Which colour?")))
    const closed = (asked: SlackMessage) => api.waitFor(() => api.messages.find((m) => m.ts === asked.ts && !m.text.includes("If there is no answer")))
    const buttonsOf = (message: SlackMessage) => message.blocks?.flatMap((block) => block.elements ?? []) ?? []

    it("is answered by a button: the click acked, the question updated without buttons, the Teller resumed", async () => {
      const steward = await start(asking(3600))
      await sender.event(dm(OWNER, OWNER_DM, "paint the fence"))
      const asked = await question()
      expect(buttonsOf(asked).map((button) => button.text?.text)).toEqual(["Red", "Blue"])
      expect((await sender.action(blockActions(api.team, OWNER, asked, "Blue"))).status).toBe(200)
      await api.waitFor(() => textsIn(api, OWNER_DM).includes('got {"answer":"Blue","source":"user"}'))
      const updated = await closed(asked)
      expect(updated.text).toBe("Which colour?\n\nAnswer: Blue")
      expect(buttonsOf(updated)).toEqual([])
      await steward.supervisor.idle()
    })

    it("expires with its default: the question updated to say so, the Teller resumed with the default", async () => {
      const steward = await start(asking(1))
      await sender.event(dm(OWNER, OWNER_DM, "paint the fence"))
      const asked = await question()
      const updated = await closed(asked)
      expect(updated.text).toBe("Which colour?\n\nNo answer — used default: Red")
      expect(buttonsOf(updated)).toEqual([])
      await api.waitFor(() => textsIn(api, OWNER_DM).includes('got {"answer":"Red","source":"default"}'))
      await steward.supervisor.idle()
    })
  })
})

describe("Slack end to end (the real program, Socket Mode)", () => {
  let steward: StewardProcess | undefined

  afterEach(async () => {
    if (steward && steward.child.exitCode === null) await steward.kill()
    steward = undefined
  })

  it("survives SIGKILL during a Worker task: after a restart on the same DATA_DIR exactly one final reply arrives", async () => {
    const hanging = hangingOnce()
    const script = delegating(hanging.worker)
    server = await startModelServer(script)
    // Socket Mode: the program connects out to the fake, so nothing listens beyond 127.0.0.1.
    const socketEnv = env({ SLACK_APP_TOKEN: api.appToken })
    steward = StewardProcess.start(socketEnv)
    await untilWhileRunning(steward, "the Socket Mode connection", () => api.socket.connections.length === 1)
    api.socket.sendEvent(dm(OWNER, OWNER_DM, "crash test"))
    await untilWhileRunning(steward, "the acknowledgement", () => textsIn(api, OWNER_DM).includes("On it."))
    await untilWhileRunning(steward, "the worker's first run", () => hanging.calls() === 1)
    expect(await steward.kill("SIGKILL")).toBe(null)

    steward = StewardProcess.start(socketEnv)
    await untilWhileRunning(steward, "the final reply after the restart", () => textsIn(api, OWNER_DM).includes("Done: Saved notes/after-crash.md"))
    expect(await steward.kill("SIGTERM")).toBe(0)
    const sent = api.calls.filter((call) => call.method === "chat.postMessage" && !String(call.params.text).startsWith("⚙️")).map((call) => call.params.text)
    expect(sent).toEqual(["On it.", "Done: Saved notes/after-crash.md"])
    expect(hanging.calls()).toBe(2)
  }, 60_000)
})
