import { spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { ConfigError, loadConfig } from "../../src/config/config.ts"
import { embedderFor } from "../../src/memory/embedder.ts"
import { startEmbeddingsServer, type EmbeddingsServer } from "../fakes/embeddings-server.ts"

const ROOT = resolve(import.meta.dirname, "../..")
const BASE = { MODEL: "openai:gpt-4.1-mini", OPENAI_API_KEY: "sk-test" }

describe("EMBEDDING_MODEL", () => {
  it("is optional and read like MODEL", () => {
    expect(loadConfig(BASE).embeddingModel).toBeUndefined()
    expect(loadConfig({ ...BASE, EMBEDDING_MODEL: "openai:text-embedding-3-small" }).embeddingModel).toEqual({ provider: "openai", id: "text-embedding-3-small", variable: "EMBEDDING_MODEL" })
    const local = loadConfig({ ...BASE, EMBEDDING_MODEL: "openai-compatible:nomic-embed-text:v1.5", OPENAI_COMPATIBLE_BASE_URL: "http://127.0.0.1:11434/v1" })
    expect(local.embeddingModel).toEqual({ provider: "openai-compatible", id: "nomic-embed-text:v1.5", variable: "EMBEDDING_MODEL" })
  })

  it.each([
    [{ EMBEDDING_MODEL: "nomic" }, /^EMBEDDING_MODEL: expected <provider>:<model-id>.*, got "nomic"$/],
    [{ ANTHROPIC_API_KEY: "ak", EMBEDDING_MODEL: "anthropic:claude" }, /^EMBEDDING_MODEL: anthropic has no embedding models; expected openai or openai-compatible, got "anthropic:claude"$/],
    [
      { EMBEDDING_MODEL: "openai-compatible:nomic-embed-text" },
      /^OPENAI_COMPATIBLE_BASE_URL is not set: expected the server's http\(s\) URL, e\.g\. http:\/\/localhost:11434\/v1, because EMBEDDING_MODEL uses openai-compatible$/,
    ],
  ])("refuses %j in one line", (env, message) => {
    expect(() => loadConfig({ ...BASE, ...env })).toThrow(ConfigError)
    expect(() => loadConfig({ ...BASE, ...env })).toThrow(message)
  })
})

describe("embedders", () => {
  let server: EmbeddingsServer
  beforeEach(async () => {
    server = await startEmbeddingsServer()
  })
  afterEach(async () => {
    await server.close()
  })

  it.each([
    ["openai:text-embedding-3-small", { OPENAI_BASE_URL: "" }],
    ["openai-compatible:nomic-embed-text", { OPENAI_COMPATIBLE_BASE_URL: "" }],
  ])("%s embeds through its provider's base URL into unit vectors named by the model", async (spec, urls) => {
    const env = Object.fromEntries(Object.keys(urls).map((name) => [name, server.url]))
    const embedder = embedderFor(loadConfig({ ...BASE, ...env, EMBEDDING_MODEL: spec }))!
    expect(embedder.model).toBe(spec)
    const [a, b] = await embedder.embed(["dentist", "tooth doctor"])
    expect(server.requests.map((r) => r.input)).toEqual([["dentist", "tooth doctor"]])
    expect(a!.reduce((sum, x) => sum + x * x, 0)).toBeCloseTo(1, 5)
    expect(a!.reduce((sum, x, i) => sum + x * b![i]!, 0)).toBeGreaterThan(0.5)
  })
})

describe("npm run steward -- memory reindex", () => {
  let dataDir: string
  let server: EmbeddingsServer
  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "steward-reindex-"))
    server = await startEmbeddingsServer()
  })
  afterEach(async () => {
    await server.close()
    rmSync(dataDir, { recursive: true, force: true })
  })

  /** The CLI as an owner runs it; asynchronous, since the fake server answers on this process's event loop. */
  const cli = (env: Record<string, string>) =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((done) => {
      const child = spawn(process.execPath, ["--import", "tsx", "src/cli.ts", "memory", "reindex"], {
        cwd: ROOT,
        // Only what the test gives: no keys from the developer's environment leak in.
        env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
      })
      let stdout = ""
      let stderr = ""
      child.stdout.on("data", (part: Buffer) => (stdout += part))
      child.stderr.on("data", (part: Buffer) => (stderr += part))
      child.on("close", (status) => done({ status, stdout, stderr }))
    })

  it("embeds every user's notes again and says so", async () => {
    for (const user of ["telegram-1001", "telegram-1002"]) {
      mkdirSync(join(dataDir, "memory", user, "memory"), { recursive: true })
      writeFileSync(join(dataDir, "memory", user, "memory", "2025-01-01-note.md"), `Note of ${user}\n\n## Second\n\nMore.\n`)
    }
    const result = await cli({ DATA_DIR: dataDir, MODEL: "openai-compatible:chat", EMBEDDING_MODEL: "openai-compatible:fake-embed", OPENAI_COMPATIBLE_BASE_URL: server.url })
    expect(result.stderr).toBe("")
    expect(result.status).toBe(0)
    expect(result.stdout.trim().split("\n").sort()).toEqual([
      // Two chunks are too few to measure the model on: trusted.
      "telegram-1001: 2 chunks embedded with openai-compatible:fake-embed, trusted 1.00",
      "telegram-1002: 2 chunks embedded with openai-compatible:fake-embed, trusted 1.00",
    ])
    expect(server.embedded).toBe(4)
  })

  it("says there is nothing to rebuild without EMBEDDING_MODEL", async () => {
    const result = await cli({ DATA_DIR: dataDir, MODEL: "openai-compatible:chat", OPENAI_COMPATIBLE_BASE_URL: server.url })
    expect(result.status).toBe(1)
    expect(result.stderr).toMatch(/^steward: EMBEDDING_MODEL is not set/)
  })
})
