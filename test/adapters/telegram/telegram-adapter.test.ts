import { Writable } from "node:stream"
import pino from "pino"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { TelegramChannel, type TelegramChannelOptions } from "../../../adapters/telegram/telegram.ts"
import type { ChannelHandlers } from "../../../src/channel/channel.ts"
import type { CommandInfo, InboundMessage, InboundOutcome, ProgressUpdate } from "../../../src/core/types.ts"
import type { Config } from "../../../src/config/config.ts"
import { callbackUpdate, MESSAGE_LIMIT, startTelegramApi, textUpdate, type TelegramApi } from "../../fakes/telegram-api.ts"

const CHAT = 1001
const CONVERSATION = `telegram:${CHAT}`
const WEBHOOK_SECRET = "s3cret-token"

/** Records what the adapter hands to the core; `take` lets a test delay or fail a hand-over. */
class RecordingHandlers implements ChannelHandlers {
  readonly received: InboundMessage[] = []
  readonly commands: CommandInfo[] = [
    { name: "tasks", description: "List queued and running tasks" },
    { name: "Not-Valid", description: "A command Telegram cannot list" },
    { name: "pairing", description: "Owner only", ownerOnly: true },
  ]
  readonly owners = [`telegram:${CHAT}`]
  take: (message: InboundMessage) => Promise<InboundOutcome | void> = async () => {}

  onMessage = async (message: InboundMessage): Promise<InboundOutcome | void> => {
    const outcome = await this.take(message)
    this.received.push(message)
    return outcome
  }
}

/** A logger whose entries the test can read. */
function recordingLog() {
  const entries: Array<{ level: number; msg: string }> = []
  const sink = new Writable({
    write(chunk, _encoding, done) {
      entries.push(JSON.parse(String(chunk)))
      done()
    },
  })
  return { log: pino({ level: "debug" }, sink), entries }
}

let api: TelegramApi
let handlers: RecordingHandlers
let logged: ReturnType<typeof recordingLog>
let channel: TelegramChannel | undefined

beforeEach(async () => {
  api = await startTelegramApi()
  handlers = new RecordingHandlers()
  logged = recordingLog()
})

afterEach(async () => {
  await channel?.stop()
  channel = undefined
  await api.close()
})

async function startChannel(config: Partial<Config["telegram"]> = {}, options: TelegramChannelOptions = {}): Promise<TelegramChannel> {
  channel = new TelegramChannel({ botToken: api.token, apiRoot: `${api.apiRoot}/`, webhookPort: 0, ...config }, logged.log, { typingRenewMs: 100, progressEditIntervalMs: 100, statusAfterMs: 0, ...options })
  await channel.start(handlers)
  return channel
}

const requestsOf = (method: string) => api.requests.filter((request) => request.method === method)
const received = (count: number) => api.waitFor(() => (handlers.received.length >= count ? handlers.received : undefined))

describe("Telegram adapter: updates in", () => {
  it("hands a private text message to the core with its update id, and registers the command menus", async () => {
    await startChannel()
    const update = textUpdate(CHAT, CHAT, "hello")
    api.pushUpdate(update)
    expect(await received(1)).toEqual([{ conversation: CONVERSATION, user: `telegram:${CHAT}`, text: "hello", eventId: `telegram:${update.update_id}` }])
    // The name Telegram would refuse is left out rather than losing the whole menu.
    expect(api.commands).toEqual([{ command: "tasks", description: "List queued and running tasks" }])
    // Owner-only commands are in the owner's own chat menu alone.
    expect([...api.chatCommands]).toEqual([[CHAT, [{ command: "tasks", description: "List queued and running tasks" }, { command: "pairing", description: "Owner only" }]]])
    expect(requestsOf("getUpdates")[0]?.params.allowed_updates).toEqual(["message", "callback_query"])
  })

  it("strips the bot's name from a command chosen in the menu", async () => {
    await startChannel()
    api.pushUpdate(textUpdate(CHAT, CHAT, `/tasks@${api.me.username} all`))
    expect((await received(1))[0]?.text).toBe("/tasks all")
  })

  it("ignores group chats, bots and messages without text", async () => {
    await startChannel()
    const group = textUpdate(-100_200, CHAT, "hello group")
    group.message!.chat = { id: -100_200, type: "group", title: "Team" }
    const bot = textUpdate(2002, 2002, "beep")
    bot.message!.from!.is_bot = true
    const sticker = textUpdate(CHAT, CHAT, "")
    delete sticker.message!.text
    const last = textUpdate(CHAT, CHAT, "only this")
    for (const update of [group, bot, sticker, last]) api.pushUpdate(update)
    await received(1)
    // The ignored updates came in the same or an earlier batch, and ignoring one is synchronous.
    await api.waitFor(() => requestsOf("getUpdates").some((request) => Number(request.params.offset) > last.update_id))
    expect(handlers.received.map((message) => message.text)).toEqual(["only this"])
  })

  it("hands a chat's messages over one at a time, in the order sent", async () => {
    let handing = 0
    let most = 0
    handlers.take = async () => {
      most = Math.max(most, ++handing)
      await new Promise((resolve) => setTimeout(resolve, 20))
      handing--
    }
    await startChannel()
    const texts = ["one", "two", "three", "four", "five"]
    for (const text of texts) api.pushUpdate(textUpdate(CHAT, CHAT, text))
    expect((await received(texts.length)).map((message) => message.text)).toEqual(texts)
    expect(most).toBe(1)
  })

  it("logs a message the core could not store and keeps polling", async () => {
    handlers.take = async (message) => {
      if (message.text === "first") throw new Error("disk full")
    }
    await startChannel()
    api.pushUpdate(textUpdate(CHAT, CHAT, "first"))
    api.pushUpdate(textUpdate(CHAT, CHAT, "second"))
    expect((await received(1)).map((message) => message.text)).toEqual(["second"])
    expect(logged.entries.some((entry) => entry.msg === "could not take a Telegram message")).toBe(true)
  })

  it("stops polling on stop(): the pending poll ends and later updates stay with Telegram", async () => {
    await startChannel()
    await api.waitFor(() => requestsOf("getUpdates").length > 0)
    const started = Date.now()
    await channel!.stop()
    expect(Date.now() - started).toBeLessThan(2000)
    const polls = requestsOf("getUpdates").length
    api.pushUpdate(textUpdate(CHAT, CHAT, "after stop"))
    const left = (await (await fetch(`${api.apiRoot}/bot${api.token}/getUpdates?timeout=0`)).json()) as { result: unknown[] }
    expect(left.result).toHaveLength(1)
    expect(requestsOf("getUpdates")).toHaveLength(polls + 1)
    expect(handlers.received).toEqual([])
  })
})

describe("Telegram adapter: replies out", () => {
  it("sends a 10,000-character Markdown reply complete, in order, in messages of at most 4096 characters, buttons on the last", async () => {
    await startChannel()
    const paragraphs = Array.from({ length: 90 }, (_, n) => `Paragraph ${n}: **bold** and _italic_ ${"word ".repeat(17)}`.trim())
    const markdown = paragraphs.join("\n\n")
    expect(markdown.length).toBeGreaterThanOrEqual(10_000)
    const { messageId } = await channel!.send(CONVERSATION, { text: markdown, buttons: [{ id: "more", label: "More" }] })
    expect(api.sent.length).toBeGreaterThanOrEqual(3)
    expect(messageId).toBe(String(api.sent.at(-1)!.message_id))
    for (const message of api.sent) expect(message.text!.length).toBeLessThanOrEqual(MESSAGE_LIMIT)
    const normalize = (text: string) => text.replace(/\s+/g, " ").trim()
    expect(normalize(api.sent.map((message) => message.text).join("\n\n"))).toBe(normalize(markdown.replace(/\*\*|_/g, "")))
    expect(api.sent.map((message) => message.reply_markup !== undefined)).toEqual([...api.sent.slice(1).map(() => false), true])
    expect(requestsOf("sendMessage").every((request) => request.params.parse_mode === "HTML")).toBe(true)
  })

  it("resends a chunk whose entities Telegram rejects as plain text, with no markup left", async () => {
    await startChannel()
    api.failNext("sendMessage", { status: 400, description: `Bad Request: can't parse entities: Unsupported start tag "x" at byte offset 0` })
    await channel!.send(CONVERSATION, { text: "**Weekly report** for _you_: see [the docs](https://example.com) & `a < b`" })
    expect(api.sent).toHaveLength(1)
    expect(api.sent[0]).toMatchObject({ text: "Weekly report for you: see the docs & a < b" })
    expect(api.sent[0]!.entities).toBeUndefined()
    const [html, plain] = requestsOf("sendMessage")
    expect(html!.params.parse_mode).toBe("HTML")
    expect(plain!.params.parse_mode).toBeUndefined()
    expect(plain!.params.text).not.toMatch(/<\/?[a-z]+>|&amp;|&lt;/)
  })

  it("shows buttons as an inline keyboard; a press is handed over with its action, then answered with the core's note", async () => {
    let answeredBeforeHandOver = false
    handlers.take = async () => {
      answeredBeforeHandOver = api.callbackAnswers.length === 1
      return { notice: "This task has already ended." }
    }
    await startChannel()
    const { messageId } = await channel!.send(CONVERSATION, { text: "Proceed?", buttons: [{ id: "q1:yes", label: "Yes" }, { id: "q1:no", label: "No" }] })
    expect(api.sent[0]!.reply_markup).toEqual({ inline_keyboard: [[{ text: "Yes", callback_data: "q1:yes" }], [{ text: "No", callback_data: "q1:no" }]] })
    const press = callbackUpdate(CHAT, CHAT, Number(messageId), "q1:no")
    api.pushUpdate(press)
    expect(await received(1)).toEqual([{ conversation: CONVERSATION, user: `telegram:${CHAT}`, text: "No", eventId: `telegram:${press.update_id}`, action: "q1:no" }])
    await api.waitFor(() => api.callbackAnswers.length === 1)
    expect(api.callbackAnswers).toEqual([{ callback_query_id: press.callback_query!.id, text: "This task has already ended." }])
    expect(answeredBeforeHandOver).toBe(false)
  })

  it("refuses a button id over Telegram's 64 bytes", async () => {
    await startChannel()
    await expect(channel!.send(CONVERSATION, { text: "Pick", buttons: [{ id: "é".repeat(33), label: "x" }] })).rejects.toThrow(/1-64 bytes/)
    expect(requestsOf("sendMessage")).toEqual([])
  })

  it("edits a message in place and removes its keyboard; an edit to the same text or a deleted message succeeds; a long one is cut", async () => {
    await startChannel()
    const { messageId } = await channel!.send(CONVERSATION, { text: "Proceed?", buttons: [{ id: "q1:yes", label: "Yes" }] })
    await channel!.edit(CONVERSATION, messageId, { text: "Proceed? **Yes**" })
    expect(api.sent).toHaveLength(1)
    expect(api.sent[0]).toMatchObject({ message_id: Number(messageId), text: "Proceed? Yes", entities: [{ type: "bold", offset: 9, length: 3 }] })
    expect(api.sent[0]!.reply_markup).toBeUndefined()
    await channel!.edit(CONVERSATION, messageId, { text: "Proceed? **Yes**" })
    await channel!.edit(CONVERSATION, messageId, { text: "long ".repeat(2000) })
    expect(api.sent[0]!.text!.length).toBeLessThanOrEqual(MESSAGE_LIMIT)
    expect(api.sent[0]!.text!.endsWith("…")).toBe(true)
    // A message the user deleted has nothing left to edit; a retry would not change that.
    await fetch(`${api.apiRoot}/bot${api.token}/deleteMessage?chat_id=${CHAT}&message_id=${messageId}`)
    await channel!.edit(CONVERSATION, messageId, { text: "Proceed? **No**" })
    expect(api.sent).toEqual([])
  })

  it("waits out a 429 and sends once; a longer rate limit fails the send for the outbox to retry", async () => {
    await startChannel({}, { maxRetryDelaySeconds: 5 })
    api.failNext("sendMessage", { status: 429, retry_after: 1 })
    const started = Date.now()
    await channel!.send(CONVERSATION, { text: "eventually" })
    expect(Date.now() - started).toBeGreaterThanOrEqual(900)
    expect(requestsOf("sendMessage")).toHaveLength(2)
    expect(api.sent.map((message) => message.text)).toEqual(["eventually"])
    api.failNext("sendMessage", { status: 429, retry_after: 60 })
    await expect(channel!.send(CONVERSATION, { text: "later" })).rejects.toThrow(/Too Many Requests/)
  })

  it("resumes a split reply after the chunks that got out when the outbox retries it", async () => {
    await startChannel()
    const message = { text: Array.from({ length: 3 }, (_, n) => `Part ${n}: ${"x".repeat(3000)}`).join("\n\n") }
    api.failNext("sendMessage", { status: 403, description: "Forbidden: bot was blocked by the user" }, 1)
    await expect(channel!.send(CONVERSATION, message)).rejects.toThrow(/blocked/)
    const { messageId } = await channel!.send(CONVERSATION, message)
    expect(api.sent.map((sent) => sent.text!.slice(0, 7))).toEqual(["Part 0:", "Part 1:", "Part 2:"])
    expect(messageId).toBe(String(api.sent[0]!.message_id))
  })
})

describe("Telegram adapter: webhook", () => {
  const post = (port: number, body: unknown, secret?: string) =>
    fetch(`http://127.0.0.1:${port}/telegram`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(secret !== undefined && { "x-telegram-bot-api-secret-token": secret }) },
      body: JSON.stringify(body),
    })

  it("sets the webhook with its secret and takes only requests that carry it", async () => {
    const webhook = await startChannel({ webhookUrl: "https://steward.example.com/telegram", webhookSecret: WEBHOOK_SECRET, webhookPort: 0 }, { webhookHost: "127.0.0.1" })
    expect(api.webhook).toEqual({ url: "https://steward.example.com/telegram", secretToken: WEBHOOK_SECRET, allowedUpdates: ["message", "callback_query"] })
    expect(requestsOf("getUpdates")).toEqual([])
    const port = webhook.webhookPort!
    const forged = textUpdate(CHAT, CHAT, "forged")
    expect((await post(port, forged)).status).toBe(401)
    expect((await post(port, forged, "wrong")).status).toBe(401)
    expect((await fetch(`http://127.0.0.1:${port}/telegram`)).status).toBe(405)
    expect(handlers.received).toEqual([])
    const update = textUpdate(CHAT, CHAT, "by webhook")
    expect((await post(port, update, WEBHOOK_SECRET)).status).toBe(200)
    expect(handlers.received).toEqual([{ conversation: CONVERSATION, user: `telegram:${CHAT}`, text: "by webhook", eventId: `telegram:${update.update_id}` }])
  })
  it("ends start-up with a configuration error naming TELEGRAM_WEBHOOK_URL when Telegram refuses it (400 bad webhook)", async () => {
    const refused = startChannel({ webhookUrl: "http://steward.example.com/telegram", webhookSecret: WEBHOOK_SECRET, webhookPort: 0 }, { webhookHost: "127.0.0.1" })
    await expect(refused).rejects.toMatchObject({ variable: "TELEGRAM_WEBHOOK_URL", message: expect.stringMatching(/^TELEGRAM_WEBHOOK_URL was refused by Telegram \(Bad Request: bad webhook: An HTTPS URL must be provided for webhook\)/) })
  })

  it("answers 500 to an update the core could not store, so Telegram delivers it again", async () => {
    let failing = true
    handlers.take = async () => {
      if (failing) throw new Error("SQLITE_BUSY: database is locked")
    }
    const webhook = await startChannel({ webhookUrl: "https://steward.example.com/telegram", webhookSecret: WEBHOOK_SECRET, webhookPort: 0 }, { webhookHost: "127.0.0.1" })
    const update = textUpdate(CHAT, CHAT, "stored on the second try")
    expect((await post(webhook.webhookPort!, update, WEBHOOK_SECRET)).status).toBe(500)
    expect(handlers.received).toEqual([])
    failing = false
    expect((await post(webhook.webhookPort!, update, WEBHOOK_SECRET)).status).toBe(200)
    expect(handlers.received.map((message) => message.text)).toEqual(["stored on the second try"])
  })
})

describe("Telegram adapter: activity and progress", () => {
  const typingCalls = () => requestsOf("sendChatAction").filter((request) => Number(request.params.chat_id) === CHAT && request.params.action === "typing").length

  it("shows typing at once and renews it while busy, and stops when not", async () => {
    await startChannel()
    channel!.activity!(CONVERSATION, true)
    channel!.activity!(CONVERSATION, true)
    await api.waitFor(() => typingCalls() >= 3)
    channel!.activity!(CONVERSATION, false)
    const after = typingCalls()
    // Nothing to await for an absence: three renewal periods without a call.
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(typingCalls()).toBeLessThanOrEqual(after + 1)
  })

  it("sends one status message per batch with its title, elapsed time and Stop button, edits it as tools change (throttled, latest wins) and ends it without the button", async () => {
    await startChannel()
    const stop = { id: "stop:t1", label: "Stop" }
    const update = (tools: ProgressUpdate["tools"], state: ProgressUpdate["state"] = "running"): ProgressUpdate => ({ taskId: "t1", agent: "worker", state, tools, title: "Sort the notes", startedAt: new Date().toISOString(), ...(state === "running" ? { stop } : { outcome: "done" as const }) })
    const read = { id: "c1", tool: "read_file", status: "running" as const, title: "read_file notes/a.md" }
    channel!.progress!(CONVERSATION, update([read]))
    const status = await api.waitFor(() => api.sent.find((message) => message.text?.includes("read_file notes/a.md")))
    expect(status.text).toMatch(/^⚙️ Sort the notes\nWorking for \d+ s\n… read_file notes\/a\.md$/)
    expect(status.reply_markup).toEqual({ inline_keyboard: [[{ text: "Stop", callback_data: "stop:t1" }]] })
    for (let n = 0; n < 5; n++) channel!.progress!(CONVERSATION, update([{ ...read, status: "completed" }, { id: `w${n}`, tool: "write_file", status: "running", title: `write_file out-${n}.md` }]))
    await api.waitFor(() => api.sent.find((message) => message.text?.includes("write_file out-4.md")))
    expect(requestsOf("editMessageText")).toHaveLength(1)
    expect(api.sent).toHaveLength(1)
    expect(api.sent[0]!.reply_markup).toEqual(status.reply_markup)
    channel!.progress!(CONVERSATION, update([], "done"))
    const ended = await api.waitFor(() => api.sent.find((message) => message.text?.includes("Done after")))
    expect(ended.text).toMatch(/^⚙️ Sort the notes\nDone after \d+ s$/)
    expect(ended.reply_markup).toBeUndefined()
    expect(requestsOf("deleteMessage")).toHaveLength(0)
  })

  it("logs a status message Telegram refuses and never throws", async () => {
    await startChannel()
    api.failNext("sendMessage", { status: 403, description: "Forbidden: bot was blocked by the user" })
    channel!.progress!(CONVERSATION, { taskId: "t2", agent: "planner", state: "running", tools: [{ id: "c1", tool: "delegate", status: "running" }] })
    await api.waitFor(() => logged.entries.some((entry) => entry.msg === "could not send a progress message"))
    channel!.progress!(CONVERSATION, { taskId: "t2", agent: "planner", state: "done", tools: [] })
    expect(requestsOf("deleteMessage")).toEqual([])
  })
})
