import pino from "pino"
import { afterEach, describe, expect, it } from "vitest"
import { SlackSignature } from "../../../adapters/slack/signature.ts"
import { SlackChannel, type SlackChannelOptions } from "../../../adapters/slack/slack.ts"
import type { ChannelState } from "../../../src/channel/channel.ts"
import type { InboundMessage } from "../../../src/core/types.ts"
import {
  blockActions,
  channelMessageEvent,
  dmEvent,
  eventCallback,
  EventSender,
  mentionEvent,
  startSlackApi,
  waitFor,
  type SlackApi,
  type SlackEvent,
} from "../../fakes/slack-api.ts"

const USER = "U0ALICE"
const DM = "D0ALICE"
/** Retries without waits of their own, so a test waits only for what Slack's Retry-After asks. */
const FAST_RETRIES = { retries: 2, minTimeout: 0, maxTimeout: 1 }

type Slack = { api: SlackApi; channel: SlackChannel; received: InboundMessage[]; sender: EventSender; dm: string }
let running: Slack[] = []

afterEach(async () => {
  for (const { api, channel } of running) {
    await channel.stop()
    await api.close()
  }
  running = []
})

function testLogger() {
  return pino({ level: process.env.STEWARD_TEST_LOG ?? "silent" }, pino.destination(2))
}

async function startSlack({
  socket = false,
  onMessage,
  options = {},
  conversations,
  state,
}: { socket?: boolean; onMessage?: (message: InboundMessage) => Promise<void>; options?: SlackChannelOptions; conversations?: string[]; state?: ChannelState } = {}): Promise<Slack> {
  const api = await startSlackApi()
  const config = { botToken: api.botToken, signingSecret: api.signingSecret, appToken: socket ? api.appToken : undefined, port: 3000, apiUrl: api.apiUrl }
  const channel = new SlackChannel(config, testLogger(), { host: "127.0.0.1", port: 0, retryConfig: FAST_RETRIES, progressEditIntervalMs: 50, statusAfterMs: 0, ...options })
  const received: InboundMessage[] = []
  const slack: Slack = { api, channel, received, sender: new EventSender("", api.signingSecret), dm: `slack:${api.team}:${DM}` }
  running.push(slack)
  await channel.start({ onMessage: onMessage ?? (async (message) => void received.push(message)), commands: [], conversations, state })
  slack.sender = new EventSender(`http://127.0.0.1:${channel.httpPort}/slack/events`, api.signingSecret)
  return slack
}

const event = (api: SlackApi, slackEvent: SlackEvent, eventId?: string) => eventCallback(api.team, slackEvent, eventId)
const posts = (api: SlackApi) => api.calls.filter((call) => call.method === "chat.postMessage")

describe("Slack adapter over HTTP (real Bolt, fake Web API)", () => {
  it("turns a DM into an InboundMessage with the event id, acknowledged with 200", async () => {
    const { api, sender, received, dm } = await startSlack()
    const body = event(api, dmEvent(USER, DM, "hello &lt;there&gt; <https://example.com|the site>"))
    const delivery = await sender.event(body)
    expect(delivery.status).toBe(200)
    await waitFor(() => received.length === 1)
    expect(received).toEqual([{ conversation: dm, user: `slack:${USER}`, text: "hello <there> the site (https://example.com)", eventId: `slack:${body.event_id}` }])
  })

  it("gives a mention in a channel its own thread conversation, follows that thread, and replies into it", async () => {
    const { api, sender, received, channel } = await startSlack()
    const mention = mentionEvent(USER, "C0GENERAL", "what's up?")
    await sender.event(event(api, mention))
    const thread = `slack:${api.team}:C0GENERAL:${mention.ts}`
    await waitFor(() => received.length === 1)
    expect(received[0]).toMatchObject({ conversation: thread, text: "what's up?" })

    await channel.send(thread, { text: "Reply in the thread" })
    expect(api.messages.at(-1)).toMatchObject({ channel: "C0GENERAL", thread_ts: mention.ts, text: "Reply in the thread" })

    // Later messages in that thread need no mention; chatter elsewhere in the channel is not for Steward.
    await sender.event(event(api, channelMessageEvent(USER, "C0GENERAL", "unrelated chatter")))
    await sender.event(event(api, channelMessageEvent(USER, "C0GENERAL", "in another thread", { thread_ts: "1600000000.000001" })))
    await sender.event(event(api, channelMessageEvent(USER, "C0GENERAL", "and a follow-up", { thread_ts: mention.ts })))
    await waitFor(() => received.length === 2)
    expect(received[1]).toMatchObject({ conversation: thread, text: "and a follow-up" })

    // A thread inside the DM is a conversation of its own, answered in that thread.
    const root = dmEvent(USER, DM, "root")
    await sender.event(event(api, dmEvent(USER, DM, "in a DM thread", { thread_ts: root.ts })))
    await waitFor(() => received.length === 3)
    expect(received[2].conversation).toBe(`slack:${api.team}:${DM}:${root.ts}`)
    expect(received).toHaveLength(3)
  })

  it("follows the threads of conversations the core already has, as after a restart", async () => {
    const followed = "1600000000.000100"
    const { api, sender, received } = await startSlack({ conversations: [`slack:T0TEAM:C0GENERAL:${followed}`, `slack:T0TEAM:${DM}`] })
    expect(api.team).toBe("T0TEAM")
    await sender.event(event(api, channelMessageEvent(USER, "C0GENERAL", "in a thread nobody follows", { thread_ts: "1600000000.000001" })))
    await sender.event(event(api, channelMessageEvent(USER, "C0GENERAL", "back in the old thread", { thread_ts: followed })))
    await waitFor(() => received.length === 1)
    expect(received[0]).toMatchObject({ conversation: `slack:T0TEAM:C0GENERAL:${followed}`, text: "back in the old thread" })
  })

  it("remembers its status messages in the channel state and deletes those left behind at the next start", async () => {
    const entries = new Map<string, unknown>()
    const state: ChannelState = {
      set: async (key, value) => void entries.set(key, value),
      delete: async (key) => void entries.delete(key),
      list: async <T,>(prefix: string) => [...entries].filter(([key]) => key.startsWith(prefix)).map(([key, value]) => ({ key, value: value as T })),
    }
    const { api, channel, dm } = await startSlack({ state })
    channel.progress(dm, { taskId: "t1", agent: "default", state: "running", tools: [{ id: "c1", tool: "read_file", status: "running" }] })
    await waitFor(() => entries.size === 1)
    const shown = api.messages.find((message) => message.text.startsWith("⚙️"))!
    await channel.stop() // as if the process ended while the task ran: its status message stays

    const config = { botToken: api.botToken, signingSecret: api.signingSecret, port: 3000, apiUrl: api.apiUrl }
    const again = new SlackChannel(config, testLogger(), { host: "127.0.0.1", port: 0, retryConfig: FAST_RETRIES })
    try {
      await again.start({ onMessage: async () => {}, commands: [], state })
      expect(api.calls.filter((call) => call.method === "chat.delete").map((call) => call.params.ts)).toEqual([shown.ts])
      expect(api.messages.some((message) => message.ts === shown.ts)).toBe(false)
      expect(entries.size).toBe(0)
    } finally {
      await again.stop()
    }
  })

  it("ignores bots, its own messages, edits and other subtypes", async () => {
    const { api, sender, received } = await startSlack()
    const ignored: SlackEvent[] = [
      dmEvent(USER, DM, "from a bot", { bot_id: "B0OTHER" }),
      { ...dmEvent(USER, DM, "bot message"), subtype: "bot_message", user: undefined },
      dmEvent(api.botUserId, DM, "Steward's own reply"),
      dmEvent(USER, DM, "edited", { subtype: "message_changed" }),
      dmEvent(USER, DM, "", {}),
    ]
    for (const slackEvent of ignored) expect((await sender.event(event(api, slackEvent))).status).toBe(200)
    await sender.event(event(api, dmEvent(USER, DM, "a person")))
    await waitFor(() => received.length >= 1)
    expect(received.map((message) => message.text)).toEqual(["a person"])
  })

  it("answers 401 to a bad signature or a stale timestamp, and hands nothing over", async () => {
    const { api, sender, received } = await startSlack()
    const body = JSON.stringify(event(api, dmEvent(USER, DM, "forged")))
    expect((await sender.post(body, "application/json", { signingSecret: "not-the-secret" })).status).toBe(401)
    expect((await sender.post(body, "application/json", { timestamp: Math.floor(Date.now() / 1000) - 6 * 60 })).status).toBe(401)
    await sender.event(event(api, dmEvent(USER, DM, "genuine")))
    await waitFor(() => received.length >= 1)
    expect(received.map((message) => message.text)).toEqual(["genuine"])
  })

  it("answers 401 to a timestamp more than five minutes in the future, as to a stale one", async () => {
    const { api, sender, received } = await startSlack()
    const body = JSON.stringify(event(api, dmEvent(USER, DM, "from the future")))
    const now = Math.floor(Date.now() / 1000)
    expect((await sender.post(body, "application/json", { timestamp: now + 6 * 60 })).status).toBe(401)
    expect((await sender.post(body, "application/json", { timestamp: now + 24 * 3600 })).status).toBe(401)
    // Clocks a little apart are not a forgery.
    await sender.event(event(api, dmEvent(USER, DM, "slightly ahead")), { timestamp: now + 60 })
    await waitFor(() => received.length >= 1)
    expect(received.map((message) => message.text)).toEqual(["slightly ahead"])
  })

  it("checks the timestamp window at both edges", () => {
    const signature = new SlackSignature("secret")
    const now = 1_700_000_000_000
    const refusal = (offsetSeconds: number) => signature.refusal(Buffer.from("x"), String(now / 1000 + offsetSeconds), "v0=" + "0".repeat(64), now)
    expect(refusal(-301)).toBe("the request is stale")
    expect(refusal(301)).toBe("the request is from the future")
    // Inside the window the timestamp passes and the (wrong) signature is what is refused.
    expect(refusal(-300)).toBe("signature mismatch")
    expect(refusal(300)).toBe("signature mismatch")
  })

  it("answers Slack's url_verification with its challenge, and 404 off the events path", async () => {
    const { sender, channel, received } = await startSlack()
    const verification = await sender.post(JSON.stringify({ token: "legacy", challenge: "c-123", type: "url_verification" }), "application/json")
    expect(verification.status).toBe(200)
    expect(JSON.parse(verification.body)).toEqual({ challenge: "c-123" })
    const elsewhere = new EventSender(`http://127.0.0.1:${channel.httpPort}/other`, "")
    expect((await elsewhere.post("{}", "application/json")).status).toBe(404)
    expect(received).toEqual([])
  })

  // Issue 12 (4) reversed the earlier contract ("acknowledges before the core has taken the
  // message"): an event is acknowledged only once the core has stored it, so a write that fails
  // leaves it to Slack's retry instead of losing it.
  it("acknowledges an event only once the core has stored it: 200 after the write, 500 when it failed", async () => {
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    let taken = false
    const { api, sender } = await startSlack({
      onMessage: async (message) => {
        if (message.text === "disk full") throw new Error("SQLITE_FULL: database or disk is full")
        await held
        taken = true
      },
    })
    let answered = false
    const delivery = sender.event(event(api, dmEvent(USER, DM, "slow"))).then((result) => ((answered = true), result))
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(answered).toBe(false)
    release()
    expect((await delivery).status).toBe(200)
    expect(taken).toBe(true)
    expect((await sender.event(event(api, dmEvent(USER, DM, "disk full")))).status).toBe(500)
  })

  it("passes a retried event on with the same event id (the core drops the second)", async () => {
    const { api, sender, received } = await startSlack()
    const body = event(api, dmEvent(USER, DM, "twice"))
    expect((await sender.event(body)).status).toBe(200)
    expect((await sender.event(body, { retryNum: 1 })).status).toBe(200)
    await waitFor(() => received.length === 2)
    expect(received[1].eventId).toBe(received[0].eventId)
  })

  it("posts buttons as Block Kit, turns a click into an action, and edits the buttons away", async () => {
    const { api, sender, received, channel, dm } = await startSlack()
    const buttons = [
      { id: "q1:0", label: "Yes" },
      { id: "q1:1", label: "No" },
    ]
    const { messageId } = await channel.send(dm, { text: "Go *ahead*?", buttons })
    const question = api.messages.at(-1)!
    expect(messageId).toBe(`${DM}:${question.ts}`)
    expect(question.text).toBe("Go _ahead_?")
    expect(question.blocks).toEqual([
      { type: "section", text: { type: "mrkdwn", text: "Go _ahead_?" } },
      {
        type: "actions",
        block_id: "steward-buttons-0",
        elements: [
          { type: "button", action_id: "steward:0", text: { type: "plain_text", text: "Yes", emoji: true }, value: "q1:0" },
          { type: "button", action_id: "steward:1", text: { type: "plain_text", text: "No", emoji: true }, value: "q1:1" },
        ],
      },
    ])

    const press = blockActions(api.team, USER, question, "No")
    const delivery = await sender.action(press)
    expect(delivery.status).toBe(200)
    await waitFor(() => received.length === 1)
    expect(received[0]).toEqual({ conversation: dm, user: `slack:${USER}`, text: "No", eventId: `slack:action:${press.trigger_id}`, action: "q1:1" })

    await channel.edit(dm, messageId, { text: "Go ahead?\n\nAnswer: No" })
    expect(api.messages.at(-1)).toMatchObject({ ts: question.ts, text: "Go ahead?\n\nAnswer: No", blocks: [{ type: "section", text: { type: "mrkdwn", text: "Go ahead?\n\nAnswer: No" } }] })
  })

  it("splits a 10,000-character reply into parts under the limit, posted in order and complete", async () => {
    const { api, channel, dm } = await startSlack()
    const paragraphs = Array.from({ length: 150 }, (_, n) => `Paragraph ${n}: **bold** text & more text, enough to fill a line or so.`)
    expect(paragraphs.join("\n\n").length).toBeGreaterThanOrEqual(10_000)
    const { messageId } = await channel.send(dm, { text: paragraphs.join("\n\n") })
    const parts = api.messages.filter((message) => message.channel === DM)
    expect(parts.length).toBeGreaterThanOrEqual(4)
    expect(messageId).toBe(`${DM}:${parts[0].ts}`)
    for (const part of parts) expect(part.text.length).toBeLessThanOrEqual(3000)
    const shown = parts.map((part) => part.text).join("\n\n")
    expect(shown).toBe(paragraphs.map((p) => p.replace("**bold**", "*bold*").replace("&", "&amp;")).join("\n\n"))
  })

  it("puts the buttons of a split reply under its last part, and gives that part's id to edit it by", async () => {
    const { api, channel, dm } = await startSlack()
    const text = Array.from({ length: 80 }, (_, n) => `Line ${n} of a long question that needs several messages to be shown.`).join("\n\n")
    const { messageId } = await channel.send(dm, { text, buttons: [{ id: "q3:0", label: "Go on" }] })
    const parts = api.messages
    expect(parts.length).toBeGreaterThan(1)
    expect(parts.map((part) => part.blocks?.some((block) => block.type === "actions") ?? false)).toEqual([...parts.slice(1).map(() => false), true])
    expect(messageId).toBe(`${DM}:${parts.at(-1)!.ts}`)

    await channel.edit(dm, messageId, { text: "Answered: Go on" })
    expect(api.messages.at(-1)).toMatchObject({ ts: parts.at(-1)!.ts, text: "Answered: Go on", blocks: [{ type: "section" }] })
  })

  it("waits out a 429's Retry-After and then posts; an error Slack returns is thrown", async () => {
    const { api, channel, dm } = await startSlack()
    api.failNext("chat.postMessage", { status: 429, retryAfter: 1 })
    const started = Date.now()
    await channel.send(dm, { text: "after the rate limit" })
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000)
    expect(posts(api)).toHaveLength(2)
    expect(api.messages.map((message) => message.text)).toEqual(["after the rate limit"])

    api.failNext("chat.postMessage", { error: "channel_not_found" })
    await expect(channel.send(dm, { text: "lost" })).rejects.toThrow(/channel_not_found/)
  })

  it("retries only the parts of a split reply that did not get out", async () => {
    const { api, channel, dm } = await startSlack()
    const text = Array.from({ length: 80 }, (_, n) => `Line ${n} of a long reply that needs several messages to be shown.`).join("\n\n")
    // The first part goes out, the second is refused.
    api.failNext("chat.postMessage", { error: "internal_error" }, (params) => !String(params.text).startsWith("Line 0 "))
    await expect(channel.send(dm, { text })).rejects.toThrow(/internal_error/)
    expect(api.messages).toHaveLength(1)
    const { messageId } = await channel.send(dm, { text })
    const parts = api.messages
    expect(messageId).toBe(`${DM}:${parts[0].ts}`)
    expect(parts.map((part) => part.text).join("\n\n")).toBe(text)
  })

  it("shows a batch's progress as one message with a Stop button, updated in place and ended without the button", async () => {
    const { api, channel, dm } = await startSlack()
    const tools = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `t${i}`, tool: "write_file", title: `write_file notes/${i}.md`, status: "completed" as const }))
    const running = (n: number) => ({ taskId: "task1", agent: "worker", state: "running" as const, tools: tools(n), title: "Sort the notes", startedAt: new Date().toISOString(), stop: { id: "stop:task1", label: "Stop" } })
    const buttonsOf = (ts: string) => api.messages.find((message) => message.ts === ts)?.blocks?.filter((block) => block.type === "actions").flatMap((block) => block.elements ?? [])
    channel.progress(dm, running(1))
    const status = await waitFor(() => api.messages.find((message) => message.text.includes("Sort the notes")))
    expect(status.text).toMatch(/^⚙️ \*Sort the notes\*\n_Working for \d+ s_\n✓ write_file notes\/0\.md$/)
    expect(buttonsOf(status.ts)).toEqual([expect.objectContaining({ value: "stop:task1", text: expect.objectContaining({ text: "Stop" }) })])
    channel.progress(dm, running(2))
    channel.progress(dm, running(3))
    await waitFor(() => api.messages.find((message) => message.ts === status.ts)?.text.includes("notes/2.md"))
    // Throttled: the two updates in a row became one chat.update with the latest text.
    expect(api.calls.filter((call) => call.method === "chat.update")).toHaveLength(1)
    expect(buttonsOf(status.ts)).toHaveLength(1)
    channel.progress(dm, { ...running(3), state: "done", stop: undefined, outcome: "stopped" })
    await waitFor(() => api.messages.find((message) => message.ts === status.ts)?.text.includes("Stopped after"))
    expect(buttonsOf(status.ts)).toEqual([])
    expect(api.calls.filter((call) => call.method === "chat.delete")).toHaveLength(0)
  })
})

describe("Slack adapter in Socket Mode (real Bolt and Socket Mode client, fake WebSocket server)", () => {
  it("ends start-up naming SLACK_APP_TOKEN when Slack refuses the app-level token (invalid_auth)", async () => {
    const api = await startSlackApi()
    const channel = new SlackChannel({ botToken: api.botToken, signingSecret: api.signingSecret, appToken: "xapp-1-A-wrong", port: 3000, apiUrl: api.apiUrl }, testLogger(), { host: "127.0.0.1", port: 0, retryConfig: FAST_RETRIES })
    try {
      await expect(channel.start({ onMessage: async () => {}, commands: [] })).rejects.toMatchObject({ variable: "SLACK_APP_TOKEN", message: expect.stringMatching(/^SLACK_APP_TOKEN was refused by Slack \(invalid_auth\)/) })
    } finally {
      await channel.stop()
      await api.close()
    }
  }, 30_000)

  it("connects, acknowledges envelopes and hands events and button presses over", async () => {
    const { api, channel, received, dm } = await startSlack({ socket: true })
    expect(api.socket.connections).toHaveLength(1)
    const body = event(api, dmEvent(USER, DM, "over the socket"))
    const envelope = api.socket.sendEvent(body)
    await waitFor(() => received.length === 1)
    expect(received[0]).toEqual({ conversation: dm, user: `slack:${USER}`, text: "over the socket", eventId: `slack:${body.event_id}` })
    await waitFor(() => api.socket.acks.some((ack) => ack.envelope_id === envelope))

    await channel.send(dm, { text: "Pick one", buttons: [{ id: "q2:0", label: "A" }] })
    const press = api.socket.sendInteractive(blockActions(api.team, USER, api.messages.at(-1)!, "A"))
    await waitFor(() => received.length === 2)
    expect(received[1]).toMatchObject({ conversation: dm, text: "A", action: "q2:0" })
    await waitFor(() => api.socket.acks.some((ack) => ack.envelope_id === press))
  })

  it("acknowledges an envelope only after the core stored its event: a failed write leaves it to Slack's redelivery", async () => {
    let stored = 0
    const { api } = await startSlack({
      socket: true,
      onMessage: async (message) => {
        if (message.text === "disk full") throw new Error("SQLITE_FULL: database or disk is full")
        await new Promise((resolve) => setTimeout(resolve, 100))
        stored++
      },
    })
    const failed = api.socket.sendEvent(event(api, dmEvent(USER, DM, "disk full")))
    const slow = api.socket.sendEvent(event(api, dmEvent(USER, DM, "slow write")))
    await waitFor(() => api.socket.acks.some((ack) => ack.envelope_id === slow))
    expect(stored).toBe(1)
    expect(api.socket.acks.map((ack) => ack.envelope_id)).not.toContain(failed)
  })

  it("restarts a connection that claims to be open but carries nothing", async () => {
    const { api, received, dm } = await startSlack({ socket: true, options: { socketSilenceMs: 300 } })
    await waitFor(() => api.socket.connections.length >= 2, 5000)
    expect(api.calls.filter((call) => call.method === "apps.connections.open").length).toBeGreaterThanOrEqual(2)
    expect(api.socket.connections[0].readyState).toBe(api.socket.connections[0].CLOSED)
    // Events flow on the new connection.
    await waitFor(() => api.socket.connections.at(-1)!.readyState === api.socket.connections.at(-1)!.OPEN)
    api.socket.sendEvent(event(api, dmEvent(USER, DM, "after the restart")))
    await waitFor(() => received.some((message) => message.text === "after the restart" && message.conversation === dm))
  })
})
