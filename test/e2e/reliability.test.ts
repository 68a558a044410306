import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pino from "pino"
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import { SlackChannel } from "../../adapters/slack/slack.ts"
import { TelegramChannel } from "../../adapters/telegram/telegram.ts"
import { startApp, type App } from "../../src/app.ts"
import type { Channel } from "../../src/channel/channel.ts"
import { loadConfig } from "../../src/config/config.ts"
import { Store, type StoredRecords } from "../../src/store/store.ts"
import { byRole, startModelServer, type ModelServer, type Script } from "../fakes/model-server.ts"
import { blockActions, dmEvent, eventCallback, EventSender, mentionEvent, startSlackApi, type SlackApi } from "../fakes/slack-api.ts"
import { startTelegramApi, textUpdate, type TelegramApi } from "../fakes/telegram-api.ts"
import { asking, replying, scriptedEnv, slackEnv, telegramEnv } from "../support/e2e.ts"
import { ListMemory } from "../support/harness.ts"

const TG_OWNER = 1001
const SLACK_OWNER = "U0OWNER"
const SLACK_OTHER = "U0OTHER"
const OWNER_DM = "D0OWNER"

let slack: SlackApi
let telegram: TelegramApi
let server: ModelServer | undefined
let app: App | undefined
let dataDir: string

beforeEach(async () => {
  slack = await startSlackApi()
  telegram = await startTelegramApi()
  dataDir = mkdtempSync(join(tmpdir(), "steward-reliability-e2e-"))
})

afterEach(async () => {
  vi.restoreAllMocks()
  await app?.stop()
  app = undefined
  await server?.close()
  server = undefined
  await slack.close()
  await telegram.close()
  rmSync(dataDir, { recursive: true, force: true })
})

const log = () => pino({ level: process.env.STEWARD_TEST_LOG ?? "silent" }, pino.destination(2))

async function start(script: Script, channel: "slack" | "telegram", extra: Record<string, string> = {}): Promise<{ app: App; sender: EventSender; channel: Channel }> {
  server = await startModelServer(script)
  const config = loadConfig({
    ...scriptedEnv(dataDir, server.url),
    ALLOWED_USERS: `telegram:${TG_OWNER},slack:${SLACK_OWNER},slack:${SLACK_OTHER}`,
    ...slackEnv(slack),
    ...telegramEnv(telegram),
    ...extra,
  })
  const made: Channel =
    channel === "slack"
      ? new SlackChannel({ ...config.slack, botToken: slack.botToken }, log(), { host: "127.0.0.1", port: 0, progressEditIntervalMs: 100, retryConfig: { retries: 1, minTimeout: 0, maxTimeout: 1 } })
      : new TelegramChannel({ ...config.telegram, botToken: telegram.token }, log())
  app = await startApp(config, log(), [made], new ListMemory())
  const port = made instanceof SlackChannel ? made.httpPort : 0
  return { app, sender: new EventSender(`http://127.0.0.1:${port}/slack/events`, slack.signingSecret), channel: made }
}

/** The store refuses the first write of a user's message, as a full disk would. */
function failFirstMessageWrite(): () => number {
  const save = Store.prototype.save
  let failed = 0
  vi.spyOn(Store.prototype, "save").mockImplementation(function (this: Store, records: Partial<StoredRecords>) {
    if (failed === 0 && records.events?.some((event) => event.kind === "user_message")) {
      failed++
      return Promise.reject(Object.assign(new Error("SQLITE_FULL: database or disk is full"), { code: "SQLITE_FULL" }))
    }
    return save.call(this, records)
  })
  return () => failed
}

describe("ack only after the write (store fault injected)", () => {
  it("Telegram polling: an update whose write failed is fetched again, and answered once", async () => {
    const failures = failFirstMessageWrite()
    await start(byRole({ teller: replying("hello back") }), "telegram")
    const update = textUpdate(TG_OWNER, TG_OWNER, "hello")
    telegram.pushUpdate(update)
    await telegram.waitFor(() => telegram.sent.some((message) => message.text === "hello back"), 15_000)
    expect(failures()).toBe(1)
    await app!.supervisor.idle()
    expect(telegram.sent.filter((message) => message.text === "hello back")).toHaveLength(1)
  })

  it("Slack over HTTP: 500 while the write fails, 200 on Slack's retry, answered once", async () => {
    const failures = failFirstMessageWrite()
    const { sender } = await start(byRole({ teller: replying("hello back") }), "slack")
    const body = eventCallback(slack.team, dmEvent(SLACK_OWNER, OWNER_DM, "hello"))
    expect((await sender.event(body)).status).toBe(500)
    expect(failures()).toBe(1)
    expect((await sender.event(body, { retryNum: 1 })).status).toBe(200)
    await slack.waitFor(() => slack.messages.some((message) => message.text === "hello back"))
    await app!.supervisor.idle()
    expect(slack.messages.filter((message) => message.text === "hello back")).toHaveLength(1)
  })
})

describe("output caps", () => {
  const huge = Array.from({ length: 20_000 }, (_, i) => `Line ${i} of a very long answer.`).join("\n")
  // In 60 deltas of 10 kB, as a network delivers a long answer: what is tested is the cap, not
  // 75,000 deltas of 8 characters written in one go (test/e2e/telegram-live.test.ts streams).
  const longAnswer = byRole({ teller: () => ({ text: huge, pace: { chunks: 60, overMs: 300 } }) })

  it("Telegram: a 600 kB answer is its first part plus the whole text as reply.md", async () => {
    await start(longAnswer, "telegram")
    telegram.pushUpdate(textUpdate(TG_OWNER, TG_OWNER, "write a lot"))
    await telegram.waitFor(() => telegram.uploads.length > 0, 15_000)
    await app!.supervisor.idle()
    // The text messages (the fake records the document as a message of its own, without text).
    const texts = telegram.sent.filter((message) => message.chat.id === TG_OWNER && message.text !== undefined)
    expect(texts.length).toBeLessThanOrEqual(2)
    expect(texts[0]!.text).toMatch(/^Line 0 of a very long answer\./)
    expect(texts.at(-1)!.text).toContain("reply.md")
    expect(telegram.uploads.map((file) => ({ method: file.method, chatId: file.chatId, filename: file.filename, content: file.data.toString("utf8") }))).toEqual([{ method: "sendDocument", chatId: TG_OWNER, filename: "reply.md", content: huge }])
  })

  it("Slack: the same answer is its first part plus the file, uploaded with files.uploadV2", async () => {
    const { sender } = await start(longAnswer, "slack")
    await sender.event(eventCallback(slack.team, dmEvent(SLACK_OWNER, OWNER_DM, "write a lot")))
    await slack.waitFor(() => slack.uploads.some((file) => file.channel === OWNER_DM), 15_000)
    await app!.supervisor.idle()
    expect(slack.messages.filter((message) => message.channel === OWNER_DM).length).toBeLessThanOrEqual(2)
    expect(slack.uploads.map((file) => ({ filename: file.filename, content: file.data.toString("utf8"), channel: file.channel }))).toEqual([{ filename: "reply.md", content: huge, channel: OWNER_DM }])
  })
})

describe("only the asked user answers (Slack channel thread)", () => {
  it("shows another user's press a note only they see, and leaves the question open for its user", async () => {
    const { sender } = await start(asking(3600), "slack")
    await sender.event(eventCallback(slack.team, mentionEvent(SLACK_OWNER, "C0TEAM", "paint the fence")))
    const asked = await slack.waitFor(() => slack.messages.find((message) => message.text.startsWith("Which colour?")))
    expect((await sender.action(blockActions(slack.team, SLACK_OTHER, asked, "Blue"))).status).toBe(200)
    await slack.waitFor(() => slack.ephemerals.length > 0)
    expect(slack.ephemerals).toEqual([{ channel: "C0TEAM", user: SLACK_OTHER, text: expect.stringMatching(/asked of someone else/), thread_ts: asked.thread_ts }])
    expect(app!.supervisor.questions.openIn(`slack:${slack.team}:C0TEAM:${asked.thread_ts}`)).toBeDefined()
    await sender.action(blockActions(slack.team, SLACK_OWNER, asked, "Red"))
    await slack.waitFor(() => slack.messages.some((message) => message.text === 'got {"answer":"Red","source":"user"}'))
  })
})

describe("the Slack send window", () => {
  it("after a crash between the post and its record, finds the post by its metadata instead of posting again", async () => {
    const { sender } = await start(byRole({ teller: replying("only once") }), "slack")
    // The record of the delivery is never written: as if the process died right after the post.
    const save = Store.prototype.save
    vi.spyOn(Store.prototype, "save").mockImplementation(function (this: Store, records: Partial<StoredRecords>) {
      if (records.outbox?.some((record) => record.status === "delivered")) return Promise.reject(new Error("SQLITE_IOERR: the process is dying"))
      return save.call(this, records)
    })
    await sender.event(eventCallback(slack.team, dmEvent(SLACK_OWNER, OWNER_DM, "hi")))
    // The answer is shown as it is written, then becomes the final message, which carries the outbox id.
    const posted = await slack.waitFor(() => slack.messages.find((message) => message.text === "only once" && message.metadata))
    expect(posted.metadata).toMatchObject({ event_type: "steward_outbox", event_payload: { id: expect.any(String) } })
    await app!.store.close().catch(() => {})
    vi.restoreAllMocks()
    await app!.stop().catch(() => {})
    app = undefined
    await server!.close()
    await start(byRole({ teller: replying("only once") }), "slack")
    await slack.waitFor(() => slack.calls.some((call) => call.method === "conversations.history" && String(call.params.include_all_metadata) === "true"))
    await app!.supervisor.idle()
    expect(slack.messages.filter((message) => message.text === "only once")).toHaveLength(1)
    const record = (await app!.store.outbox.all()).find((r) => r.text === "only once")!
    expect(record).toMatchObject({ status: "delivered", messageId: `${OWNER_DM}:${posted.ts}` })
  })
})
