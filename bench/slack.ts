/**
 * Slack benchmark: how fast the real adapter (Bolt's HTTP receiver, signature check, ack)
 * answers a burst of 200 concurrent signed Events API requests while the Supervisor takes
 * each event durably and runs its Teller turn with an instant model — Slack retries an event
 * that is not acknowledged within 3 s, so the acknowledgement must not wait for that work.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Worker } from "node:worker_threads"
import pino from "pino"
import { SlackChannel } from "../adapters/slack/slack.ts"
import { startApp, type App } from "../src/app.ts"
import { loadConfig } from "../src/config/config.ts"
import { startSlackApi } from "../test/fakes/slack-api.ts"
import { scriptedModel } from "../test/support/mock-model.ts"
import type { ChannelHandlers } from "../src/channel/channel.ts"
import type { Figures } from "./figures.ts"
import type { Burst, LoadInput } from "./slack-load.ts"
import { noMemory } from "./no-memory.ts"

const CONCURRENT = 200
const WARM_UP_ROUNDS = 2
const ROUNDS = 5

/** The adapter with a count of the messages the Supervisor has taken, so a burst can be waited out. */
class CountingSlackChannel extends SlackChannel {
  taken = 0

  override start(handlers: ChannelHandlers): Promise<void> {
    return super.start({ ...handlers, onMessage: (message) => handlers.onMessage(message).then(() => void this.taken++) })
  }
}

/** Has the load generator send one burst of CONCURRENT signed DMs at once; resolves with each acknowledgement's latency. */
function burst(load: Worker, round: number): Promise<number[]> {
  return new Promise((resolve, reject) => {
    load.once("message", (answer: { latencies: number[] } | { error: string }) => ("error" in answer ? reject(new Error(answer.error)) : resolve(answer.latencies)))
    load.once("error", reject)
    load.postMessage({ count: CONCURRENT, round } satisfies Burst)
  })
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]

export async function runSlackBench(figures: Figures): Promise<void> {
  const api = await startSlackApi()
  const dataDir = mkdtempSync(join(tmpdir(), "steward-bench-slack-"))
  const log = pino({ level: process.env.BENCH_LOG ?? "silent" }, pino.destination(2))
  const config = loadConfig({
    DATA_DIR: dataDir,
    MODEL: "openai-compatible:instant",
    OPENAI_COMPATIBLE_BASE_URL: "http://127.0.0.1:9/v1",
    ALLOWED_USERS: "*",
    SLACK_BOT_TOKEN: api.botToken,
    SLACK_SIGNING_SECRET: api.signingSecret,
    SLACK_API_URL: api.apiUrl,
  })
  const channel = new CountingSlackChannel({ ...config.slack, botToken: api.botToken }, log, { host: "127.0.0.1", port: 0 })
  const model = scriptedModel((call) => (call.lastToolResults.length > 0 ? { text: "" } : { toolCalls: [{ name: "reply", args: { text: `ok: ${call.lastUserText}` } }] }))
  const memory = noMemory
  let app: App | undefined
  let load: Worker | undefined
  try {
    app = await startApp(config, log, [channel], memory, () => model)
    const input: LoadInput = { url: `http://127.0.0.1:${channel.httpPort}/slack/events`, signingSecret: api.signingSecret, team: api.team }
    load = new Worker(new URL("./slack-load.mjs", import.meta.url), { workerData: input })
    const latencies: number[] = []
    for (let round = 0; round < WARM_UP_ROUNDS + ROUNDS; round++) {
      const measured = await burst(load, round)
      if (round >= WARM_UP_ROUNDS) latencies.push(...measured)
      // Each burst meets a quiet Steward, as a burst after a lull would: every event of this one
      // taken (events are acknowledged before they reach the Supervisor) and worked off.
      await api.waitFor(() => channel.taken >= (round + 1) * CONCURRENT, 60_000)
      await app.supervisor.idle()
    }
    latencies.sort((a, b) => a - b)
    figures.add("slack_ack_p50_200_concurrent", percentile(latencies, 50), "ms")
    figures.add("slack_ack_p99_200_concurrent", percentile(latencies, 99), "ms", "<= 50")
  } finally {
    await load?.terminate()
    await app?.stop()
    await api.close()
    rmSync(dataDir, { recursive: true, force: true })
  }
}
