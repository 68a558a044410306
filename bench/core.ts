/**
 * Core benchmark: the Supervisor, agent loop and SQLite store with an instant scripted model,
 * so the figures are Steward's own overhead, not a model's.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { LanguageModelV3, LanguageModelV3CallOptions, LanguageModelV3Content, LanguageModelV3GenerateResult } from "@ai-sdk/provider"
import pino from "pino"
import { startApp } from "../src/app.ts"
import type { Channel, ChannelHandlers } from "../src/channel/channel.ts"
import type { InboundMessage, OutgoingMessage } from "../src/core/types.ts"
import { loadConfig } from "../src/config/config.ts"
import { Figures } from "./figures.ts"
import { noMemory } from "./no-memory.ts"

/** Sessions are kept to a typical chat's size (≤ 40 messages): the AI SDK validates every
 *  message of the prompt on every call, so a turn's cost grows with its session. */
const SOLO_CONVERSATIONS = 50
const TURNS_PER_SOLO_CONVERSATION = 10
const ROUND_TRIPS = 200
const CONVERSATIONS = 200
const TURNS_PER_CONVERSATION = 5

/** Who writes to Steward in the benchmarks: an owner (the console's user, an owner by default),
 *  since quotas spare owners only, and a benchmark sends far more than a user's 20 messages a minute. */
export const BENCH_OWNER = "console:local"

/** Replies arrive here; each waiter is woken by the reply that completes its turn. */
export class BenchChannel implements Channel {
  readonly name = "bench"
  private onMessage!: ChannelHandlers["onMessage"]
  private waiting = new Map<string, () => void>()
  private sent = 0

  async start({ onMessage }: ChannelHandlers) {
    this.onMessage = onMessage
  }
  async send(conversation: string, { text }: OutgoingMessage) {
    if (text.startsWith("final")) {
      const wake = this.waiting.get(conversation)
      this.waiting.delete(conversation)
      wake?.()
    }
    return { messageId: String(++this.sent) }
  }
  async edit() {}
  async stop() {}

  /** Sends a message and resolves when its final reply was handed to the channel. */
  turn(conversation: string, text: string): Promise<void> {
    const done = new Promise<void>((resolve) => this.waiting.set(conversation, resolve))
    return this.onMessage({ conversation, user: BENCH_OWNER, text }).then(() => done)
  }
}

function result(content: LanguageModelV3Content[]): LanguageModelV3GenerateResult {
  return {
    content,
    finishReason: { unified: content.some((c) => c.type === "tool-call") ? "tool-calls" : "stop", raw: undefined },
    usage: { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } },
    warnings: [],
  }
}

let calls = 0
const call = (name: string, input: unknown): LanguageModelV3Content => ({ type: "tool-call", toolCallId: `c${++calls}`, toolName: name, input: JSON.stringify(input) })

/** Instant model: the Teller replies (and delegates when asked), the Planner dispatches one worker.
 *  A model of its own rather than the AI SDK's mock, which keeps every call's prompt: in a long
 *  run those prompts outlived the young generation, and copying them made scavenges of 30–140 ms
 *  that the soak counted as Steward's event-loop stalls. */
export function instantModel(): LanguageModelV3 {
  return {
    specificationVersion: "v3",
    provider: "bench",
    modelId: "instant",
    supportedUrls: {},
    doStream: () => Promise.reject(new Error("the instant model does not stream")),
    doGenerate: async (options: LanguageModelV3CallOptions) => {
      const system = options.prompt.find((m) => m.role === "system")?.content ?? ""
      const last = options.prompt.at(-1)!
      const lastText = last.role === "user" ? last.content.map((p) => (p.type === "text" ? p.text : "")).join("") : ""
      if (last.role === "tool" || !options.tools?.length) return result([{ type: "text", text: system.includes("# Role: planner") ? "dispatched" : "" }])
      if (system.includes("# Role: teller")) {
        if (lastText.startsWith("<task-results>")) return result([call("reply", { text: "final: results" })])
        if (lastText.startsWith("delegate")) return result([call("delegate", { prompt: lastText })])
        return result([call("reply", { text: `final: ${lastText}` })])
      }
      if (system.includes("# Role: planner")) return result([call("delegate", { prompt: "work" })])
      return result([{ type: "text", text: "worked" }])
    },
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

export async function runCoreBench(figures: Figures): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), "steward-bench-"))
  const config = loadConfig({ DATA_DIR: dataDir, MODEL: "openai-compatible:instant", OPENAI_COMPATIBLE_BASE_URL: "http://127.0.0.1:9/v1", ALLOWED_USERS: BENCH_OWNER, WORKER_CONCURRENCY: "8" })
  const channel = new BenchChannel()
  const memory = noMemory
  const model = instantModel()
  const app = await startApp(config, pino({ level: process.env.BENCH_LOG ?? "silent" }, pino.destination(2)), [channel], memory, () => model)
  try {
    // Warm-up: JIT, SQLite page cache.
    for (let i = 0; i < 100; i++) await channel.turn(`bench:warm${i % 10}`, `hello ${i}`).then(() => app.supervisor.idle())

    const teller: number[] = []
    for (let turn = 0; turn < TURNS_PER_SOLO_CONVERSATION; turn++) {
      for (let c = 0; c < SOLO_CONVERSATIONS; c++) {
        const start = performance.now()
        await channel.turn(`bench:solo${c}`, `hello ${turn}`)
        teller.push(performance.now() - start)
        await app.supervisor.idle() // the turn's last (empty) step, outside the measured window
      }
    }
    teller.sort((a, b) => a - b)
    figures.add("teller_turn_p50", percentile(teller, 50), "ms", "<= 2")
    figures.add("teller_turn_p99", percentile(teller, 99), "ms", "<= 10")

    const trips: number[] = []
    for (let i = 0; i < ROUND_TRIPS; i++) {
      const start = performance.now()
      await channel.turn(`bench:delegate${i % 20}`, `delegate ${i}`)
      trips.push(performance.now() - start)
      await app.supervisor.idle()
    }
    trips.sort((a, b) => a - b)
    figures.add("delegate_round_trip_p50", percentile(trips, 50), "ms", "<= 10")

    const start = performance.now()
    await Promise.all(
      Array.from({ length: CONVERSATIONS }, async (_, c) => {
        for (let i = 0; i < TURNS_PER_CONVERSATION; i++) await channel.turn(`bench:c${c}`, `hello ${i}`)
      }),
    )
    const seconds = (performance.now() - start) / 1000
    figures.add("turns_per_second_200_conversations", (CONVERSATIONS * TURNS_PER_CONVERSATION) / seconds, "turns/s", ">= 500")
    await app.supervisor.idle()
  } finally {
    await app.stop()
    rmSync(dataDir, { recursive: true, force: true })
  }
}
