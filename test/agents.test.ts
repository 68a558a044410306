import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pino from "pino"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { loadAgents } from "../src/agent/agents.ts"
import { PROMPTS_DIR, startApp } from "../src/app.ts"
import { ConfigError, loadConfig } from "../src/config/config.ts"
import { ListMemory } from "./support/harness.ts"

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
