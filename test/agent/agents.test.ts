import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pino from "pino"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { environment, loadAgents } from "../../src/agent/agents.ts"
import { PROMPTS_DIR, startApp } from "../../src/app.ts"
import { ConfigError, loadConfig } from "../../src/config/config.ts"
import { byRole, contentText } from "../fakes/model-server.ts"
import { ListMemory, startHarness } from "../support/harness.ts"
import { afterTool, say } from "../support/scripts.ts"

let prompts: string
let dataDir: string
beforeEach(() => {
  prompts = mkdtempSync(join(tmpdir(), "steward-prompts-"))
  dataDir = mkdtempSync(join(tmpdir(), "steward-data-"))
  cpSync(PROMPTS_DIR, prompts, { recursive: true })
})
afterEach(() => {
  rmSync(prompts, { recursive: true, force: true })
  rmSync(dataDir, { recursive: true, force: true })
})

const workerFile = (name: string, front: string) => writeFileSync(join(prompts, "workers", `${name}.md`), `---\n${front}\n---\n# Role: worker (${name})\nDo the work.\n`)
const errorOf = (run: () => unknown) => {
  try {
    run()
  } catch (error) {
    return error
  }
  throw new Error("expected an error")
}

describe("worker types", () => {
  it("loads a worker type with its description, model and tools", () => {
    workerFile("coder", "description: Writes code.\nmodel: anthropic:claude-sonnet-4-5\ntools: [read_file, write_file]")
    expect(loadAgents(prompts).workers.get("coder")).toMatchObject({ role: "worker", description: "Writes code.", model: "anthropic:claude-sonnet-4-5", tools: ["read_file", "write_file"] })
  })

  it.each(["planner", "teller", "compaction", "default", "Bad Name"])("refuses a worker type named %j as a configuration error", (name) => {
    workerFile(name, "description: Sneaky.")
    const error = errorOf(() => loadAgents(prompts))
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as Error).message).toMatch(/a worker type's name must be/)
  })

  it("reports bad front matter as a configuration error naming the file", () => {
    workerFile("helper", "description: Helps.\ncolour: blue")
    const error = errorOf(() => loadAgents(prompts))
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as Error).message).toMatch(/^prompts\/workers\/helper\.md: /)
  })

  it("refuses at start-up a worker type whose model's provider is not configured", async () => {
    workerFile("coder", "description: Writes code.\nmodel: anthropic:claude-sonnet-4-5")
    const config = loadConfig({ DATA_DIR: dataDir, MODEL: "openai-compatible:m", OPENAI_COMPATIBLE_BASE_URL: "http://127.0.0.1:9/v1" })
    const started = startApp(config, pino({ level: "silent" }), [], new ListMemory(), undefined, { promptsDir: prompts })
    await expect(started).rejects.toThrow("ANTHROPIC_API_KEY is not set: expected an Anthropic API key, because prompts/workers/coder.md uses anthropic")
    await expect(started).rejects.toBeInstanceOf(ConfigError)
  })
})

describe("environment block", () => {
  it("tells the model the current time with its zone and offset, the channel, conversation and user", () => {
    const now = new Date("2026-03-01T08:00:00Z")
    const block = environment(now, { conversation: "telegram:1001", user: "telegram:1001" })
    expect(block.split("\n")[0]).toBe("<env>")
    const iso = /ISO (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d)\)/.exec(block)?.[1]
    expect(Date.parse(iso!)).toBe(now.getTime())
    expect(block).toContain(`time zone ${Intl.DateTimeFormat().resolvedOptions().timeZone}`)
    expect(block).toContain("2026")
    expect(block).toContain("  Channel: telegram\n  Conversation: telegram:1001\n  User: telegram:1001\n</env>")
  })

  it("rides on every role's newest input, never in the system prompt", async () => {
    const harness = await startHarness(
      byRole({
        teller: (req) => (afterTool(req) ? { text: "" } : req.lastUserText.includes("<task-results>") ? say("done") : { toolCalls: [{ name: "delegate", args: { prompt: "p" } }] }),
        planner: (req) => (afterTool(req) ? { text: "ok" } : { toolCalls: [{ name: "delegate", args: { prompt: "w" } }] }),
        worker: () => ({ text: "ok" }),
      }),
    )
    try {
      await harness.channel.say("go")
      await harness.channel.waitForSent(1)
      // The system prompt stays the same bytes on every call; the time changes with every message.
      for (const request of harness.server.requests) expect(request.body.messages[0]!.content).not.toContain("<env>")
      const inputs = harness.server.requests.map((r) => [r.role, contentText(r.body.messages.findLast((m) => m.role === "user" && contentText(m.content).startsWith("<env>"))?.content)])
      for (const role of ["teller", "planner", "worker"]) {
        const input = inputs.find(([r]) => r === role)![1]
        expect(input).toMatch(/<env>\n {2}Current time: .+\n {2}Channel: test\n {2}Conversation: test:c1\n {2}User: test:u1\n<\/env>/)
      }
    } finally {
      await harness.close()
    }
  })
})
