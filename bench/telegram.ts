/**
 * Telegram benchmark: updates per second through the real adapter (grammY runner, per-chat
 * sequencing, getUpdates batches of up to 100 from the fake Bot API on 127.0.0.1) into the
 * Supervisor, which takes each durably (dedupe record, inbox event) and runs its Teller turn
 * with an instant model meanwhile — so the figure is the adapter's and the core's own cost.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pino from "pino"
import { TelegramChannel } from "../adapters/telegram/telegram.ts"
import { startApp } from "../src/app.ts"
import type { Channel } from "../src/channel/channel.ts"
import { loadConfig } from "../src/config/config.ts"
import { startTelegramApi, textUpdate, type TelegramApi } from "../test/fakes/telegram-api.ts"
import { scriptedModel } from "../test/support/mock-model.ts"
import type { Figures } from "./figures.ts"
import { noMemory } from "./no-memory.ts"

const WARM_UP_UPDATES = 200
const UPDATES = 2000
const CHATS = 200

/** The channel as the app sees it, with a count of the messages the Supervisor has taken. */
function counting(channel: TelegramChannel): Channel & { taken: number } {
  const counted = {
    name: channel.name,
    taken: 0,
    start: (handlers: Parameters<Channel["start"]>[0]) => channel.start({ ...handlers, onMessage: (message) => handlers.onMessage(message).then(() => void counted.taken++) }),
    send: channel.send.bind(channel),
    edit: channel.edit.bind(channel),
    activity: channel.activity.bind(channel),
    progress: channel.progress.bind(channel),
    stop: channel.stop.bind(channel),
  }
  return counted
}

/** Queues `count` text updates spread over the chats, all at once, and resolves once the Supervisor took them. */
async function deliver(api: TelegramApi, channel: { taken: number }, count: number): Promise<number> {
  const target = channel.taken + count
  const started = performance.now()
  for (let i = 0; i < count; i++) api.pushUpdate(textUpdate(1000 + (i % CHATS), 1000 + (i % CHATS), `hello ${i}`))
  await api.waitFor(() => channel.taken >= target, 120_000)
  return (performance.now() - started) / 1000
}

export async function runTelegramBench(figures: Figures): Promise<void> {
  const api = await startTelegramApi()
  const dataDir = mkdtempSync(join(tmpdir(), "steward-bench-telegram-"))
  const log = pino({ level: process.env.BENCH_LOG ?? "silent" }, pino.destination(2))
  const config = loadConfig({ DATA_DIR: dataDir, MODEL: "openai-compatible:instant", OPENAI_COMPATIBLE_BASE_URL: "http://127.0.0.1:9/v1", ALLOWED_USERS: "*", TELEGRAM_BOT_TOKEN: api.token, TELEGRAM_API_ROOT: api.apiRoot })
  const channel = counting(new TelegramChannel({ ...config.telegram, botToken: api.token }, log))
  const model = scriptedModel((call) => (call.lastToolResults.length > 0 ? { text: "" } : { toolCalls: [{ name: "reply", args: { text: `ok: ${call.lastUserText}` } }] }))
  const memory = noMemory
  const app = await startApp(config, log, [channel], memory, () => model)
  try {
    await deliver(api, channel, WARM_UP_UPDATES)
    await app.supervisor.idle()
    const seconds = await deliver(api, channel, UPDATES)
    figures.add("telegram_updates_per_second", UPDATES / seconds, "updates/s")
    // Replies still going out would meet a closed store.
    await app.supervisor.idle()
  } finally {
    await app.stop()
    await api.close()
    rmSync(dataDir, { recursive: true, force: true })
  }
}
