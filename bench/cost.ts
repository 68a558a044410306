/**
 * Cost benchmark: what the model is sent, on the real Supervisor, agent loop and store, with a
 * scripted model that records every request. Figures: how much of the Teller's input repeats
 * the prefix of an earlier request (what a provider's prompt cache can serve), how many calls a
 * delegated job takes, whether the Teller is called again after a reply that ended its turn,
 * and how large the Teller's prompt gets on a long chat.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { LanguageModelV3, LanguageModelV3CallOptions, LanguageModelV3Content, LanguageModelV3GenerateResult } from "@ai-sdk/provider"
import pino from "pino"
import { estimateTokens } from "../src/agent/context.ts"
import { startApp, type App } from "../src/app.ts"
import type { Channel, ChannelHandlers } from "../src/channel/channel.ts"
import type { InboundMessage } from "../src/core/types.ts"
import { loadConfig } from "../src/config/config.ts"
import { BENCH_OWNER } from "./core.ts"
import { noMemory } from "./no-memory.ts"
import { Figures } from "./figures.ts"

const PREFIX_TURNS = 300
const LONG_TURNS = 1_000
/** Requests a prompt is compared with for a shared prefix: caches expire, and the newest are
 *  the ones that share the most. */
const PREFIX_WINDOW = 64
const MINUTES_BETWEEN_MESSAGES = 3

type Prompt = LanguageModelV3CallOptions["prompt"]

/**
 * What the Teller's requests add up to, taken as they are made: a long chat's prompts are far
 * too large to keep.
 */
class TellerRequests {
  count = 0
  afterReply = 0
  repeatedChars = 0
  totalChars = 0
  tokens: number[] = []
  /** The newest requests, as tools, system and messages in the order a provider caches them. */
  private recent: string[][] = []

  add(options: LanguageModelV3CallOptions): void {
    this.count++
    // Cache markers (providerOptions) say where to cache, they are not content a cache compares.
    const content = (key: string, value: unknown) => (key === "providerOptions" ? undefined : value)
    const chunks = [...(options.tools ?? []).map((tool) => JSON.stringify(tool)), ...options.prompt.map((m) => JSON.stringify(m, content))]
    const length = chunks.reduce((sum, chunk) => sum + chunk.length, 0)
    this.totalChars += length
    this.repeatedChars += Math.max(0, ...this.recent.map((earlier) => sharedPrefix(earlier, chunks)))
    this.recent = [...this.recent.slice(-(PREFIX_WINDOW - 1)), chunks]
    this.tokens.push(estimateTokens(chunks.join("")))
    const last = options.prompt.at(-1)
    if (last?.role === "tool" && last.content.some((part) => part.type === "tool-result" && part.toolName === "reply")) this.afterReply++
  }
}

/** Characters of `b` that repeat the start of `a`. */
function sharedPrefix(a: readonly string[], b: readonly string[]): number {
  let chars = 0
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] === b[i]) {
      chars += a[i]!.length
      continue
    }
    let same = 0
    while (same < a[i]!.length && a[i]![same] === b[i]![same]) same++
    return chars + same
  }
  return chars
}

/** A chat that hands every message in and only waits for Steward to be idle. */
class BenchChannel implements Channel {
  readonly name = "bench"
  private onMessage!: ChannelHandlers["onMessage"]
  private sent = 0
  async start({ onMessage }: ChannelHandlers) {
    this.onMessage = onMessage
  }
  async send() {
    return { messageId: String(++this.sent) }
  }
  async edit() {}
  async stop() {}
  async say(conversation: string, text: string): Promise<void> {
    await this.onMessage({ conversation, user: BENCH_OWNER, text })
  }
}

/**
 * The chat's clock: messages of a real chat are minutes apart, and the Teller is told the time
 * of each. Without this the whole benchmark runs within a few seconds, and prompts that carry
 * the time to the second would look as cacheable as prompts that do not.
 */
class ChatClock {
  private readonly real = Date
  private offset = 0

  install(): void {
    const real = this.real
    const clock = this
    globalThis.Date = class extends real {
      constructor(...args: unknown[]) {
        if (args.length === 0) super(real.now() + clock.offset)
        else super(...(args as [string]))
      }
      static override now(): number {
        return real.now() + clock.offset
      }
    } as DateConstructor
  }
  advance(ms: number): void {
    this.offset += ms
  }
  uninstall(): void {
    globalThis.Date = this.real
  }
}

/** Deterministic pseudo-random text, so every run (before and after a change) sees the same chat. */
class Words {
  private seed = 12345
  private next(): number {
    this.seed = (this.seed * 1103515245 + 12345) % 2 ** 31
    return this.seed / 2 ** 31
  }
  between(min: number, max: number): number {
    return Math.floor(min + this.next() * (max - min))
  }
  text(length: number): string {
    const words = ["the", "meeting", "report", "tomorrow", "kettle", "budget", "draft", "flight", "invoice", "garden", "review", "notes", "Berlin", "price", "weekend"]
    let out = ""
    while (out.length < length) out += `${words[this.between(0, words.length)]} `
    return out.slice(0, length)
  }
}

/** An answer with the usage a provider would report: the loop compacts by it. */
function result(options: LanguageModelV3CallOptions, content: LanguageModelV3Content[]): LanguageModelV3GenerateResult {
  const input = estimateTokens(options.prompt) + estimateTokens(options.tools ?? [])
  const output = estimateTokens(content)
  return {
    content,
    finishReason: { unified: content.some((c) => c.type === "tool-call") ? "tool-calls" : "stop", raw: undefined },
    usage: { inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: output, text: output, reasoning: 0 } },
    warnings: [],
  }
}

function textOf(message: Prompt[number] | undefined): string {
  if (!message || typeof message.content === "string") return (message?.content as string) ?? ""
  return message.content.map((part) => (part.type === "text" ? part.text : "")).join("")
}

/**
 * The chat's model. The Teller replies to a message, or — for "delegate …" — delegates and
 * says it is on it in the same step, and summarises task results; the Planner dispatches one
 * worker; the worker writes a file and reports. After a tool result it answers with empty text
 * (a model with nothing left to do).
 */
function chatModel(words: Words, calls: { all: number; teller: TellerRequests }): LanguageModelV3 {
  let ids = 0
  const call = (name: string, input: unknown): LanguageModelV3Content => ({ type: "tool-call", toolCallId: `b${++ids}`, toolName: name, input: JSON.stringify(input) })
  const doGenerate = async (options: LanguageModelV3CallOptions): Promise<LanguageModelV3GenerateResult> => {
      const system = options.prompt.filter((m) => m.role === "system").map((m) => m.content as string).join("\n")
      const role = /# Role: (\w+)/.exec(system)?.[1] ?? "unknown"
      const answer = (content: LanguageModelV3Content[]) => result(options, content)
      calls.all++
      if (role === "teller") calls.teller.add(options)
      const last = options.prompt.at(-1)!
      if (role === "compaction") return answer([{ type: "text", text: `Summary: ${words.text(1_200)}` }])
      if (last.role === "tool" || !options.tools?.length) return answer([{ type: "text", text: role === "worker" ? `Result: ${words.text(words.between(1_500, 6_000))}` : role === "planner" ? "Dispatched one worker." : "" }])
      const said = textOf(last)
      if (role === "teller") {
        if (said.includes("<task-results>")) return answer([call("reply", { text: words.text(words.between(400, 1_200)) })])
        if (said.startsWith("delegate")) return answer([call("delegate", { prompt: said }), call("reply", { text: "On it — I will tell you when it is done." })])
        if (said.startsWith("tasks")) return answer([call("list_tasks", {})])
        return answer([call("reply", { text: words.text(words.between(150, 900)) })])
      }
      if (role === "planner") return answer([{ type: "text", text: "Dispatched one worker." }, call("delegate", { prompt: "write the notes file" })])
      return answer([call("write_file", { path: "notes.txt", content: words.text(200) })])
  }
  // Not MockLanguageModelV3: it keeps every call's prompt, which a long chat cannot afford.
  return {
    specificationVersion: "v3",
    provider: "bench",
    modelId: "scripted",
    supportedUrls: {},
    doGenerate,
    doStream: () => Promise.reject(new Error("the cost benchmark does not stream")),
  }
}

/** Every fifth message delegates, every eleventh asks about tasks; the rest is conversation. */
function message(turn: number, words: Words): string {
  if (turn % 5 === 4) return `delegate ${words.text(words.between(80, 300))}`
  if (turn % 11 === 10) return `tasks ${words.text(40)}`
  return words.text(words.between(80, 400))
}

interface Calls {
  all: number
  teller: TellerRequests
}

async function withApp(use: (app: App, channel: BenchChannel, words: Words) => Promise<void>): Promise<Calls> {
  const dataDir = mkdtempSync(join(tmpdir(), "steward-bench-cost-"))
  const config = loadConfig({ DATA_DIR: dataDir, MODEL: "openai-compatible:scripted", OPENAI_COMPATIBLE_BASE_URL: "http://127.0.0.1:9/v1", ALLOWED_USERS: BENCH_OWNER })
  const channel = new BenchChannel()
  const words = new Words()
  const calls: Calls = { all: 0, teller: new TellerRequests() }
  const model = chatModel(words, calls)
  const app = await startApp(config, pino({ level: process.env.BENCH_LOG ?? "silent" }, pino.destination(2)), [channel], noMemory, () => model)
  try {
    await use(app, channel, words)
    return calls
  } finally {
    await app.stop()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

async function chat(turns: number): Promise<TellerRequests> {
  const clock = new ChatClock()
  clock.install()
  try {
    const calls = await withApp(async (app, channel, words) => {
      for (let turn = 0; turn < turns; turn++) {
        clock.advance(MINUTES_BETWEEN_MESSAGES * 60_000)
        await channel.say("bench:long", message(turn, words))
        await app.supervisor.idle()
      }
    })
    return calls.teller
  } finally {
    clock.uninstall()
  }
}

export async function runCostBench(figures: Figures): Promise<void> {
  const job = await withApp(async (app, channel) => {
    await channel.say("bench:job", "delegate find the cheapest flight to Berlin")
    await app.supervisor.idle()
  })
  figures.add("calls_per_delegated_job", job.all, "calls", "<= 5")

  const short = await chat(PREFIX_TURNS)
  figures.add("teller_cache_prefix_share", short.repeatedChars / short.totalChars, "share", ">= 0.95")
  figures.add("teller_calls_after_reply", short.afterReply, "calls", "<= 0")

  const long = await chat(LONG_TURNS)
  figures.add("teller_prompt_tokens_mean", long.tokens.reduce((a, b) => a + b, 0) / long.tokens.length, "tokens", "<= 16000")
  figures.add("teller_prompt_tokens_max", Math.max(...long.tokens), "tokens", "<= 32000")
}
