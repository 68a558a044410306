/**
 * Live answers: from the model's first streamed token to the first text the user sees — a
 * Telegram draft (sendMessageDraft), a Slack stream in an assistant thread (chat.startStream) —
 * through the real adapters (grammY, Bolt over HTTP), the Supervisor and the AI SDK's streamText
 * against the fake model server, which streams each answer (a reply call's text) in 40 chunks
 * over 8 s, for 50 conversations at once. Also: the updates each answer shows, and on the
 * fallback paths (Telegram with drafts refused, a top-level Slack DM) the most edits one chat
 * gets in a second.
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
import { byRole, startModelServer } from "../test/fakes/model-server.ts"
import { dmEvent, eventCallback, EventSender, startSlackApi } from "../test/fakes/slack-api.ts"
import { startTelegramApi, textUpdate } from "../test/fakes/telegram-api.ts"
import { noMemory } from "./no-memory.ts"
import type { Figures } from "./figures.ts"

const CONVERSATIONS = Number(process.env.BENCH_CONVERSATIONS ?? 50)
const SPACING_MS = 20
const CHUNKS = 40
const STREAM_MS = 8000
const ANSWER = Array.from({ length: 40 }, (_, i) => `Part ${i + 1} of the answer.`).join(" ")

/** What the user saw of one conversation: when each visible update arrived (`performance.now()`). */
type Rig = {
  env: Record<string, string>
  channel: (config: ReturnType<typeof loadConfig>) => Channel
  /** Sends conversation `n`'s message; its id for `updates`. */
  send: (n: number) => Promise<string>
  /** The arrival times of the live updates of conversation `id`'s answer. */
  updates: (id: string) => number[]
  close: () => Promise<void>
}

async function telegramRig(drafts: boolean): Promise<Rig> {
  const api = await startTelegramApi()
  if (!drafts) for (let i = 0; i < CONVERSATIONS; i++) api.failNext("sendMessageDraft", { status: 400, description: "Bad Request: method not available" })
  return {
    env: { TELEGRAM_BOT_TOKEN: api.token, TELEGRAM_API_ROOT: api.apiRoot },
    channel: (config) => new TelegramChannel({ ...config.telegram, botToken: api.token }, silent()),
    send: async (n) => {
      const chat = 7000 + n
      api.pushUpdate(textUpdate(chat, chat, `tell me ${n}`))
      return String(chat)
    },
    updates: (chat) =>
      drafts
        ? api.drafts.filter((draft) => String(draft.chatId) === chat).map((draft) => draft.at)
        : api.requests.filter((request) => ["sendMessage", "editMessageText"].includes(request.method) && String(request.params.chat_id) === chat).map((request) => request.at),
    close: () => api.close(),
  }
}

async function slackRig(threads: boolean): Promise<Rig> {
  const api = await startSlackApi()
  let channel: SlackChannel | undefined
  const methods = threads ? ["chat.startStream", "chat.appendStream"] : ["chat.postMessage", "chat.update"]
  return {
    env: { SLACK_BOT_TOKEN: api.botToken, SLACK_SIGNING_SECRET: api.signingSecret, SLACK_API_URL: api.apiUrl },
    channel: (config) => (channel = new SlackChannel({ ...config.slack, botToken: api.botToken }, silent(), { host: "127.0.0.1", port: 0 })),
    send: async (n) => {
      const dm = `D0S${n}`
      const thread = threads ? `1700001000.${String(n).padStart(6, "0")}` : undefined
      if (thread) api.assistantThreads.add(`${dm}:${thread}`)
      await new EventSender(`http://127.0.0.1:${channel!.httpPort}/slack/events`, api.signingSecret).event(eventCallback(api.team, dmEvent(`U0S${n}`, dm, `tell me ${n}`, thread ? { thread_ts: thread } : {})))
      return dm
    },
    updates: (dm) => {
      return api.calls.filter((call) => methods.includes(call.method) && call.params.channel === dm).map((call) => call.at)
    },
    close: () => api.close(),
  }
}

const silent = () => pino({ level: process.env.BENCH_LOG ?? "silent" }, pino.destination(2))
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!

/** Per conversation: the first token's time (from the model server) and the visible updates. */
async function run(rig: Rig): Promise<Array<{ firstToken: number; updates: number[] }>> {
  const server = await startModelServer(
    byRole({ teller: (req) => (req.lastToolResults.length > 0 ? { text: "" } : { toolCalls: [{ name: "reply", args: { text: `${req.lastUserText}: ${ANSWER}` } }], pace: { chunks: CHUNKS, overMs: STREAM_MS } }) }),
  )
  const dataDir = mkdtempSync(join(tmpdir(), "steward-bench-stream-"))
  const config = loadConfig({ DATA_DIR: dataDir, MODEL: "openai-compatible:bench", OPENAI_COMPATIBLE_BASE_URL: server.url, ALLOWED_USERS: "*", ...rig.env })
  const app = await startApp(config, silent(), [rig.channel(config)], noMemory)
  try {
    const ids: string[] = []
    // One message every 20 ms: within a second all 50 answers stream at once.
    for (let n = 0; n < CONVERSATIONS; n++) {
      ids.push(await rig.send(n))
      await sleep(SPACING_MS)
    }
    await server.waitForRequests(CONVERSATIONS, 30_000)
    await app.supervisor.idle()
    return ids.map((id, n) => {
      const request = server.requests.find((candidate) => JSON.stringify(candidate.body.messages).includes(`tell me ${n}\\n`) || JSON.stringify(candidate.body.messages).includes(`tell me ${n}"`))
      return { firstToken: request?.firstTokenAt ?? Number.NaN, updates: rig.updates(id) }
    })
  } finally {
    await app.stop()
    await server.close()
    await rig.close()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

/** The most calls within any one second: a window sliding from each call (arrival times, sorted). */
function maxPerSecond(times: number[]): number {
  let most = 0
  for (let i = 0; i < times.length; i++) most = Math.max(most, times.filter((at) => at >= times[i]! && at < times[i]! + 1000).length)
  return most
}

/** The shortest time between two calls reaching one chat (arrival times, sorted): the whole
 *  numbers of maxPerSecond hide how close to the limit a chat came. */
const shortestGap = (times: number[]) => Math.min(...times.slice(1).map((at, i) => at - times[i]!))

export async function runStreamBench(figures: Figures): Promise<void> {
  let fewest = Number.POSITIVE_INFINITY
  for (const [name, rig] of [["telegram", () => telegramRig(true)], ["slack", () => slackRig(true)]] as const) {
    const answers = await run(await rig())
    const delays = answers.map((answer) => (answer.updates[0] ?? Number.POSITIVE_INFINITY) - answer.firstToken).sort((a, b) => a - b)
    figures.add(`stream_first_text_ms_${name}`, percentile(delays, 50), "ms", "<= 500")
    figures.add(`stream_first_text_ms_${name}_p99`, percentile(delays, 99), "ms", "<= 1500")
    fewest = Math.min(fewest, ...answers.map((answer) => answer.updates.length))
  }
  figures.add("stream_updates_per_answer", fewest, "updates", ">= 3")
  let fastest = 0
  let closest = Number.POSITIVE_INFINITY
  for (const rig of [() => telegramRig(false), () => slackRig(false)]) {
    // Per chat, every call that changes what it shows — the post, each edit, the final edit.
    for (const answer of await run(await rig())) {
      const times = [...answer.updates].sort((a, b) => a - b)
      fastest = Math.max(fastest, maxPerSecond(times.slice(1)))
      closest = Math.min(closest, shortestGap(times))
    }
  }
  figures.add("stream_edit_rate_max_per_s", fastest, "edits/s", "<= 1")
  figures.add("stream_edit_gap_min_ms", closest, "ms", ">= 1000")
}

// `tsx bench/stream.ts`: this benchmark alone.
if (import.meta.url === `file://${process.argv[1]}`) {
  const { Figures } = await import("./figures.ts")
  await runStreamBench(new Figures(process.argv.includes("--json")))
  process.exit(0)
}
