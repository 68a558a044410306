import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pino from "pino"
import { afterEach, describe, expect, it } from "vitest"
import { startApp, type App } from "../../src/app.ts"
import { loadConfig } from "../../src/config/config.ts"
import type { UsageSample } from "../../src/usage/usage.ts"
import { cacheBlocks, startAnthropicApi, type AnthropicApi, type AnthropicRequest } from "../fakes/anthropic-api.ts"
import { byRole, startModelServer, type ModelServer } from "../fakes/model-server.ts"
import { ListMemory, TestChannel } from "../support/harness.ts"
import { afterTool, say } from "../support/scripts.ts"

let cleanup: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const step of cleanup.reverse()) await step()
  cleanup = []
})

/** Steward on a fresh data folder with the given model settings and a test channel. */
async function start(env: Record<string, string>): Promise<{ app: App; channel: TestChannel; usage: UsageSample[] }> {
  const dataDir = mkdtempSync(join(tmpdir(), "steward-cache-"))
  const channel = new TestChannel()
  const config = loadConfig({ DATA_DIR: dataDir, MODEL_MAX_RETRIES: "0", ...env })
  // The test channel is no channel Steward ships, so ALLOWED_USERS would refuse its users.
  config.allowedUsers = { anyone: false, users: new Set(["test:u1", "test:u2"]) }
  const usage: UsageSample[] = []
  const app = await startApp(config, pino({ level: "silent" }), [channel], new ListMemory(), undefined, { onUsage: (sample) => usage.push(sample) })
  cleanup.push(async () => {
    await app.stop()
    rmSync(dataDir, { recursive: true, force: true })
  })
  return { app, channel, usage }
}

/** The block indexes of a request's cache breakpoints (see cacheBlocks). */
const breakpoints = (req: AnthropicRequest) => cacheBlocks(req.body).flatMap((block, i) => (block.breakpoint ? [i] : []))

describe("Anthropic prompt caching", () => {
  let api: AnthropicApi

  it("marks the stable part and the conversation so far, and every request reads what the one before wrote", async () => {
    api = await startAnthropicApi((req) => {
      if (req.role === "planner") return { text: "Dispatched.", toolCalls: [{ name: "delegate", input: { prompt: "count" } }] }
      if (req.role === "worker") return req.afterTool ? { text: "There are 3 cats." } : { toolCalls: [{ name: "list_files", input: {} }] }
      if (req.lastUserText.includes("<task-results>")) return { toolCalls: [{ name: "reply", input: { text: "3 cats." } }] }
      if (req.lastUserText.startsWith("count")) return { toolCalls: [{ name: "delegate", input: { prompt: "count the cats" } }, { name: "reply", input: { text: "On it." } }] }
      if (req.lastUserText.startsWith("look")) return req.afterTool ? { toolCalls: [{ name: "reply", input: { text: "Nothing queued." } }] } : { toolCalls: [{ name: "list_tasks", input: {} }] }
      return { toolCalls: [{ name: "reply", input: { text: `you said ${req.lastUserText}` } }] }
    })
    cleanup.push(() => api.close())
    const { app, channel, usage } = await start({ MODEL: "anthropic:claude-test", ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: api.url })
    for (const text of ["hello", "look at my tasks", "count the cats", "thanks"]) {
      await channel.say(text)
      await app.supervisor.idle()
    }
    expect(channel.sent.map((m) => m.text)).toEqual(["you said hello", "Nothing queued.", "On it.", "3 cats.", "you said thanks"])

    const teller = api.requests.filter((req) => req.role === "teller")
    expect(teller).toHaveLength(6) // one call per turn, two for the turn that used a tool
    for (const req of teller) {
      const marks = breakpoints(req)
      const blocks = cacheBlocks(req.body)
      expect(marks.length).toBeLessThanOrEqual(4)
      // The stable part ends at the instructions (tools are cached before them): no time in it.
      const system = req.body.system!
      expect(system.at(-1)!.cache_control).toEqual({ type: "ephemeral" })
      expect(req.system).not.toContain("<env>")
      expect(marks).toContain(blocks.findLastIndex((b) => b.key.startsWith("system:")))
      // The conversation so far ends with a breakpoint.
      expect(marks).toContain(blocks.length - 1)
      expect(req.body.tools!.map((tool) => tool.name)).toEqual(teller[0]!.body.tools!.map((tool) => tool.name))
    }
    // Each request starts with everything the one before sent up to its last breakpoint, and
    // marks that point again, so the cache it wrote is read.
    for (let i = 1; i < teller.length; i++) {
      const before = cacheBlocks(teller[i - 1]!.body).map((b) => b.key)
      const after = cacheBlocks(teller[i]!.body).map((b) => b.key)
      const end = breakpoints(teller[i - 1]!).at(-1)!
      expect(after.slice(0, end + 1)).toEqual(before.slice(0, end + 1))
      expect(breakpoints(teller[i]!)).toContain(end)
      expect(breakpoints(teller[i]!).slice(0, 1)).toEqual(breakpoints(teller[i - 1]!).slice(0, 1))
    }
    // The new message's time rides on it.
    expect(JSON.stringify(teller.at(-1)!.body.messages.at(-1))).toMatch(/<env>\\n {2}Current time: /)

    // What the cache served reaches the usage samples: all but the first Teller call read most
    // of their input from it.
    const tellerUsage = usage.filter((sample) => sample.role === "teller")
    expect(tellerUsage).toHaveLength(6)
    for (const sample of tellerUsage.slice(1)) expect(sample.cachedInput / sample.input).toBeGreaterThan(0.8)
    expect(tellerUsage[0]).toMatchObject({ conversation: "test:c1", model: "anthropic.messages:claude-test" })
    expect(usage.find((sample) => sample.role === "worker")?.taskId).toEqual(expect.any(String))
  })
})

describe("OpenAI prompt cache key", () => {
  let server: ModelServer

  it("sends prompt_cache_key, the same for every request of a conversation and another for another conversation", async () => {
    server = await startModelServer(byRole({ teller: (req) => (afterTool(req) ? { text: "" } : say(`you said ${req.lastUserText}`)) }))
    cleanup.push(() => server.close())
    const { app, channel } = await start({ MODEL: "openai:gpt-test", OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: server.url })
    await channel.say("hello")
    await app.supervisor.idle()
    await channel.say("again")
    await app.supervisor.idle()
    await channel.say("elsewhere", "test:c2", "test:u2")
    await app.supervisor.idle()
    const keys = server.requests.map((req) => req.body.prompt_cache_key)
    expect(keys).toHaveLength(3)
    expect(keys[0]).toMatch(/^steward-[0-9a-f]{32}$/)
    expect(keys[1]).toBe(keys[0])
    expect(keys[2]).not.toBe(keys[0])
    // The key does not show the conversation it stands for.
    expect(keys.join(" ")).not.toContain("test:c1")
  })
})
