import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pino from "pino"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { SlackChannel } from "../../adapters/slack/slack.ts"
import { TelegramChannel } from "../../adapters/telegram/telegram.ts"
import { startApp, type App } from "../../src/app.ts"
import type { Channel } from "../../src/channel/channel.ts"
import { loadConfig } from "../../src/config/config.ts"
import { byRole, contentText, startModelServer, type ChatRequest, type ModelServer, type Reply } from "../fakes/model-server.ts"
import { blockActions, channelMessageEvent, eventCallback, EventSender, mentionEvent, startSlackApi, type SlackApi } from "../fakes/slack-api.ts"
import { callbackUpdate, groupUpdate, startTelegramApi, type TelegramApi } from "../fakes/telegram-api.ts"
import { scriptedEnv, slackEnv, telegramEnv } from "../support/e2e.ts"
import { ListMemory } from "../support/harness.ts"
import { afterTool, envText, say } from "../support/scripts.ts"
import { eventually } from "../support/wait-for.ts"

/**
 * Two people write in one conversation — a Slack channel thread, a Telegram group — and each
 * message is handled as its author's: real Bolt and grammY against the fakes on 127.0.0.1.
 */

const SLACK_A = "U0ALICE"
const SLACK_B = "U0BOB"
const TG_A = 2001
const TG_B = 2002
const TG_GROUP = -100777

let slack: SlackApi
let telegram: TelegramApi
let server: ModelServer | undefined
let app: App | undefined
let memory: ListMemory
let dataDir: string

beforeEach(async () => {
  slack = await startSlackApi()
  telegram = await startTelegramApi()
  memory = new ListMemory()
  dataDir = mkdtempSync(join(tmpdir(), "steward-shared-e2e-"))
})

afterEach(async () => {
  await app?.stop()
  app = undefined
  await server?.close()
  server = undefined
  await slack.close()
  await telegram.close()
  rmSync(dataDir, { recursive: true, force: true })
})

const log = () => pino({ level: process.env.STEWARD_TEST_LOG ?? "silent" }, pino.destination(2))

/** A's first message holds its turn until `release`; every user's "remember …" is remembered. */
function sharedScript() {
  let release!: () => void
  const released = new Promise<void>((resolve) => (release = resolve))
  let entered!: () => void
  const holding = new Promise<void>((resolve) => (entered = resolve))
  const seen: ChatRequest[] = []
  const teller = async (req: ChatRequest): Promise<Reply> => {
    seen.push(req)
    const answer = req.lastToolResults.find((result) => result.toolName === "ask_user")
    if (answer) return { toolCalls: [{ name: "remember", args: { content: `colour ${answer.content}` } }] }
    if (afterTool(req)) return { text: "" }
    const text = req.lastUserText
    if (text.includes("plan my trip")) {
      entered()
      await released
      return { toolCalls: [{ name: "remember", args: { content: "the trip" } }] }
    }
    if (text.includes("paint")) return { toolCalls: [{ name: "ask_user", args: { question: "Which colour?", options: ["Red", "Blue"], timeout: 3600 } }] }
    if (text.includes("remember")) return { toolCalls: [{ name: "remember", args: { content: text.slice(text.indexOf("remember")) } }] }
    return say("ok")
  }
  return { script: byRole({ teller }), release, holding, seen }
}

async function start(channel: "slack" | "telegram", script: ReturnType<typeof sharedScript>["script"]): Promise<{ sender: EventSender }> {
  server = await startModelServer(script)
  const config = loadConfig({
    ...scriptedEnv(dataDir, server.url),
    ALLOWED_USERS: `slack:${SLACK_A},slack:${SLACK_B},telegram:${TG_A},telegram:${TG_B}`,
    ...slackEnv(slack),
    ...telegramEnv(telegram),
  })
  const made: Channel =
    channel === "slack"
      ? new SlackChannel({ ...config.slack, botToken: slack.botToken }, log(), { host: "127.0.0.1", port: 0, progressEditIntervalMs: 100, retryConfig: { retries: 1, minTimeout: 0, maxTimeout: 1 } })
      : new TelegramChannel({ ...config.telegram, botToken: telegram.token }, log())
  app = await startApp(config, log(), [made], memory)
  return { sender: new EventSender(`http://127.0.0.1:${made instanceof SlackChannel ? made.httpPort : 0}/slack/events`, slack.signingSecret) }
}

/** Resolves once a user message with `text` is in the inbox (taken by the core, not yet handled). */
const queued = (text: string) => eventually(async () => (await app!.store.events()).some((event) => event.text.includes(text)), `"${text}" queued`)

const userTexts = (req: ChatRequest) => req.messages.filter((m) => m.role === "user").map((m) => contentText(m.content)).join("\n")
const actingFor = (req: ChatRequest) => /User: (\S+)/.exec(envText(req as never))?.[1]

/** B's words never reach a request made for A's turn; B's turn acts as B. */
function expectSeparateTurns(seen: readonly ChatRequest[], a: string, b: string, bText: string): void {
  const forB = seen.filter((req) => req.lastUserText.includes(bText))
  expect(forB.length).toBeGreaterThan(0)
  for (const req of forB) expect(actingFor(req)).toBe(b)
  for (const req of seen.filter((r) => actingFor(r) === a)) expect(userTexts(req)).not.toContain(bText)
}

describe("Slack channel thread shared by two users", () => {
  it("B's message during A's turn is B's own turn: B's memory note, B's identity", async () => {
    const shared = sharedScript()
    const { sender } = await start("slack", shared.script)
    const opened = mentionEvent(SLACK_A, "C0TEAM", "plan my trip")
    await sender.event(eventCallback(slack.team, opened))
    await shared.holding
    await sender.event(eventCallback(slack.team, channelMessageEvent(SLACK_B, "C0TEAM", "remember my seat is 12C", { thread_ts: opened.ts })))
    await queued("my seat is 12C")
    shared.release()
    await eventually(() => memory.notes.length === 2, "both notes")
    await app!.supervisor.idle()
    expect(memory.notes).toEqual([
      { user: `slack:${SLACK_A}`, content: "the trip" },
      { user: `slack:${SLACK_B}`, content: "remember my seat is 12C" },
    ])
    expectSeparateTurns(shared.seen, `slack:${SLACK_A}`, `slack:${SLACK_B}`, "my seat is 12C")
  })

  it("A's ask_user answer continues as A although B wrote in the thread meanwhile", async () => {
    const shared = sharedScript()
    const { sender } = await start("slack", shared.script)
    const opened = mentionEvent(SLACK_A, "C0TEAM", "paint the fence")
    await sender.event(eventCallback(slack.team, opened))
    const asked = await slack.waitFor(() => slack.messages.find((message) => message.text.startsWith("Which colour?")))
    await sender.event(eventCallback(slack.team, channelMessageEvent(SLACK_B, "C0TEAM", "remember badge 42", { thread_ts: opened.ts })))
    await queued("badge 42")
    await sender.action(blockActions(slack.team, SLACK_A, asked, "Blue"))
    await eventually(() => memory.notes.length === 2, "both notes")
    await app!.supervisor.idle()
    expect(memory.notes).toEqual([
      { user: `slack:${SLACK_A}`, content: 'colour {"answer":"Blue","source":"user"}' },
      { user: `slack:${SLACK_B}`, content: "remember badge 42" },
    ])
    expectSeparateTurns(shared.seen, `slack:${SLACK_A}`, `slack:${SLACK_B}`, "badge 42")
  })
})

describe("Telegram group shared by two users", () => {
  const mention = (text: string) => `@${telegram.me.username} ${text}`

  it("B's message during A's turn is B's own turn; the group's other talk is left alone", async () => {
    const shared = sharedScript()
    await start("telegram", shared.script)
    telegram.pushUpdate(groupUpdate(TG_GROUP, TG_A, mention("plan my trip")))
    await shared.holding
    telegram.pushUpdate(groupUpdate(TG_GROUP, TG_B, "lunch at noon, anyone? remember to book"))
    telegram.pushUpdate(groupUpdate(TG_GROUP, TG_B, mention("remember my seat is 12C")))
    await queued("my seat is 12C")
    shared.release()
    await eventually(() => memory.notes.length === 2, "both notes")
    await app!.supervisor.idle()
    expect(memory.notes).toEqual([
      { user: `telegram:${TG_A}`, content: "the trip" },
      { user: `telegram:${TG_B}`, content: "remember my seat is 12C" },
    ])
    expectSeparateTurns(shared.seen, `telegram:${TG_A}`, `telegram:${TG_B}`, "my seat is 12C")
    expect(shared.seen.some((req) => userTexts(req).includes("lunch at noon"))).toBe(false)
  })

  it("A's ask_user answer continues as A; B's press of A's button is shown a note, and nothing else happens", async () => {
    const shared = sharedScript()
    await start("telegram", shared.script)
    telegram.pushUpdate(groupUpdate(TG_GROUP, TG_A, mention("paint the fence")))
    const asked = await telegram.waitFor(() => telegram.sent.find((message) => message.text?.startsWith("Which colour?")))
    const blue = asked.reply_markup!.inline_keyboard.flat().find((button) => button.text === "Blue") as { callback_data: string }
    telegram.pushUpdate(groupUpdate(TG_GROUP, TG_B, mention("remember badge 42")))
    await queued("badge 42")
    telegram.pushUpdate(callbackUpdate(TG_GROUP, TG_B, asked.message_id, blue.callback_data))
    await telegram.waitFor(() => telegram.callbackAnswers.find((answer) => answer.text?.includes("someone else")))
    expect(memory.notes).toEqual([])
    telegram.pushUpdate(callbackUpdate(TG_GROUP, TG_A, asked.message_id, blue.callback_data))
    await eventually(() => memory.notes.length === 2, "both notes")
    await app!.supervisor.idle()
    expect(memory.notes).toEqual([
      { user: `telegram:${TG_A}`, content: 'colour {"answer":"Blue","source":"user"}' },
      { user: `telegram:${TG_B}`, content: "remember badge 42" },
    ])
    expectSeparateTurns(shared.seen, `telegram:${TG_A}`, `telegram:${TG_B}`, "badge 42")
  })
})
