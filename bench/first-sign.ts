/**
 * First sign of life: from a user's message to the busy indicator on the platform — Telegram's
 * `typing` (sendChatAction), Slack's 👀 (reactions.add) — through the real adapters (grammY,
 * Bolt over HTTP) and the Supervisor, against the fake platform APIs on 127.0.0.1, which note
 * when each call arrives. 50 users write one message each, 20 ms apart, to an instant model and
 * to a slow one (it answers after 1.5 s, so up to 50 turns run at once): the indicator must not
 * wait for the model.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import pino from "pino"
import { SlackChannel } from "../adapters/slack/slack.ts"
import { TelegramChannel } from "../adapters/telegram/telegram.ts"
import { startApp } from "../src/app.ts"
import type { Channel } from "../src/channel/channel.ts"
import { loadConfig } from "../src/config/config.ts"
import { dmEvent, eventCallback, EventSender, startSlackApi } from "../test/fakes/slack-api.ts"
import { startTelegramApi, textUpdate } from "../test/fakes/telegram-api.ts"
import { scriptedModel } from "../test/support/mock-model.ts"
import { noMemory } from "./no-memory.ts"
import type { Figures } from "./figures.ts"

const MESSAGES = 50
const SPACING_MS = 20
const SLOW_MODEL_MS = 1500
const TARGET = "<= 1000"

/** A platform fake with Steward's channel for it: sends message `n`, tells when its indicator arrived. */
type Rig = {
  env: Record<string, string>
  channel: (config: ReturnType<typeof loadConfig>) => Channel
  /** Sends message `n` once the channel runs; resolves with when it was sent (`performance.now()`). */
  send: (n: number) => Promise<number>
  /** When message `n`'s busy indicator reached the platform, if it has. */
  signAt: (n: number) => number | undefined
  close: () => Promise<void>
}

async function telegramRig(): Promise<Rig> {
  const api = await startTelegramApi()
  const chat = (n: number) => 5000 + n
  return {
    env: { TELEGRAM_BOT_TOKEN: api.token, TELEGRAM_API_ROOT: api.apiRoot },
    channel: (config) => new TelegramChannel({ ...config.telegram, botToken: api.token }, silent()),
    send: async (n) => {
      const sentAt = performance.now()
      api.pushUpdate(textUpdate(chat(n), chat(n), `hello ${n}`))
      return sentAt
    },
    signAt: (n) => api.requests.find((request) => request.method === "sendChatAction" && Number(request.params.chat_id) === chat(n))?.at,
    close: () => api.close(),
  }
}

async function slackRig(): Promise<Rig> {
  const api = await startSlackApi()
  let channel: SlackChannel | undefined
  const sent = new Map<number, { channel: string; ts: string }>()
  return {
    env: { SLACK_BOT_TOKEN: api.botToken, SLACK_SIGNING_SECRET: api.signingSecret, SLACK_API_URL: api.apiUrl },
    channel: (config) => (channel = new SlackChannel({ ...config.slack, botToken: api.botToken }, silent(), { host: "127.0.0.1", port: 0 })),
    send: async (n) => {
      const event = dmEvent(`U0B${n}`, `D0B${n}`, `hello ${n}`)
      sent.set(n, { channel: event.channel, ts: event.ts })
      const sentAt = performance.now()
      await new EventSender(`http://127.0.0.1:${channel!.httpPort}/slack/events`, api.signingSecret).event(eventCallback(api.team, event))
      return sentAt
    },
    signAt: (n) => api.calls.find((call) => call.method === "reactions.add" && call.params.channel === sent.get(n)?.channel && call.params.timestamp === sent.get(n)?.ts)?.at,
    close: () => api.close(),
  }
}

const silent = () => pino({ level: process.env.BENCH_LOG ?? "silent" }, pino.destination(2))
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!

/** The delays from each message to its indicator, in ms, sorted. */
async function measure(makeRig: () => Promise<Rig>, modelDelayMs: number): Promise<number[]> {
  const rig = await makeRig()
  const dataDir = mkdtempSync(join(tmpdir(), "steward-bench-first-sign-"))
  const config = loadConfig({ DATA_DIR: dataDir, MODEL: "openai-compatible:bench", OPENAI_COMPATIBLE_BASE_URL: "http://127.0.0.1:9/v1", ALLOWED_USERS: "*", ...rig.env })
  const model = scriptedModel(async (call) => {
    if (call.lastToolResults.length > 0) return { text: "" }
    if (modelDelayMs > 0) await sleep(modelDelayMs)
    return { toolCalls: [{ name: "reply", args: { text: `ok: ${call.lastUserText}` } }] }
  })

  const app = await startApp(config, silent(), [rig.channel(config)], noMemory, () => model)
  try {
    const sentAt: number[] = []
    for (let n = 0; n < MESSAGES; n++) {
      sentAt.push(await rig.send(n))
      await sleep(SPACING_MS)
    }
    await app.supervisor.idle()
    return sentAt.map((at, n) => (rig.signAt(n) ?? Number.POSITIVE_INFINITY) - at).sort((a, b) => a - b)
  } finally {
    await app.stop()
    await rig.close()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

export async function runFirstSignBench(figures: Figures): Promise<void> {
  const all: number[] = []
  for (const [channel, rig] of [["telegram", telegramRig], ["slack", slackRig]] as const) {
    for (const [model, delay] of [["instant", 0], ["slow", SLOW_MODEL_MS]] as const) {
      const delays = await measure(rig, delay)
      all.push(...delays)
      figures.add(`first_sign_of_life_ms_${channel}_${model}_model`, percentile(delays, 99), "ms")
    }
  }
  figures.add("first_sign_of_life_ms", percentile(all.sort((a, b) => a - b), 99), "ms", TARGET)
}
