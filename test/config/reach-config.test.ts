import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { describe, expect, it } from "vitest"
import { ConfigError, loadConfig } from "../../src/config/config.ts"
import { StewardProcess } from "../support/process.ts"

// MCP_CONFIG, MCP_TOOL_TIMEOUT and the web search variables.

const BASE = { MODEL: "openai:gpt-4.1-mini", OPENAI_API_KEY: "sk-test" }

function errorOf(env: Record<string, string>): string {
  try {
    loadConfig({ ...BASE, ...env })
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError)
    return (error as Error).message
  }
  throw new Error("accepted")
}

describe("configuration", () => {
  it("has no MCP servers, a 60 s tool timeout and no search by default", () => {
    const config = loadConfig(BASE)
    expect(config.mcp).toEqual({ configFile: undefined, toolTimeoutMs: 60_000, toolMaxMs: 600_000, elicitationTimeoutMs: 300_000 })
    expect(config.search).toBeUndefined()
  })

  it("reads MCP_CONFIG as a path and MCP_TOOL_TIMEOUT in seconds", () => {
    expect(loadConfig({ ...BASE, MCP_CONFIG: "mcp.json", MCP_TOOL_TIMEOUT: "5" }).mcp).toEqual({ configFile: resolve("mcp.json"), toolTimeoutMs: 5000, toolMaxMs: 600_000, elicitationTimeoutMs: 300_000 })
    // Progress may extend a call past MCP_TOOL_TIMEOUT up to MCP_TOOL_MAX_SECONDS, never below it.
    expect(loadConfig({ ...BASE, MCP_TOOL_TIMEOUT: "120", MCP_TOOL_MAX_SECONDS: "60", MCP_ELICITATION_TIMEOUT: "30" }).mcp).toMatchObject({ toolTimeoutMs: 120_000, toolMaxMs: 120_000, elicitationTimeoutMs: 30_000 })
    expect(() => loadConfig({ ...BASE, MCP_ELICITATION_TIMEOUT: "soon" })).toThrow(/MCP_ELICITATION_TIMEOUT/)
    expect(errorOf({ MCP_TOOL_TIMEOUT: "0" })).toBe('MCP_TOOL_TIMEOUT: expected a whole number from 1 to 3600, got "0"')
  })

  it("reads each search provider with what it needs, and the default API URLs", () => {
    expect(loadConfig({ ...BASE, SEARCH_PROVIDER: "searxng", SEARXNG_URL: "http://localhost:8888" }).search).toEqual({ provider: "searxng", url: "http://localhost:8888" })
    expect(loadConfig({ ...BASE, SEARCH_PROVIDER: "brave", BRAVE_API_KEY: "b" }).search).toEqual({ provider: "brave", apiKey: "b", apiUrl: "https://api.search.brave.com/res/v1/web/search" })
    expect(loadConfig({ ...BASE, SEARCH_PROVIDER: "tavily", TAVILY_API_KEY: "t" }).search).toEqual({ provider: "tavily", apiKey: "t", apiUrl: "https://api.tavily.com/search" })
  })

  it("names the variable a search provider is missing, or a provider that does not exist", () => {
    expect(errorOf({ SEARCH_PROVIDER: "searxng" })).toBe("SEARXNG_URL is not set: expected the SearXNG instance's URL, e.g. http://localhost:8888, because SEARCH_PROVIDER is searxng")
    expect(errorOf({ SEARCH_PROVIDER: "brave" })).toBe("BRAVE_API_KEY is not set: expected a Brave Search API key, because SEARCH_PROVIDER is brave")
    expect(errorOf({ SEARCH_PROVIDER: "tavily" })).toBe("TAVILY_API_KEY is not set: expected a Tavily API key, because SEARCH_PROVIDER is tavily")
    expect(errorOf({ SEARCH_PROVIDER: "google" })).toBe('SEARCH_PROVIDER: expected one of searxng, brave, tavily, got "google"')
    expect(errorOf({ SEARXNG_URL: "localhost" })).toBe('SEARXNG_URL: expected an http(s) URL, got "localhost"')
  })
})

describe("npm start with a bad MCP_CONFIG", () => {
  it("prints one line naming MCP_CONFIG and exits 2", async () => {
    const dir = mkdtempSync(join(tmpdir(), "steward-mcp-bad-"))
    const path = join(dir, "mcp.json")
    writeFileSync(path, JSON.stringify({ mcpServers: { github: { args: ["x"] } } }))
    const steward = StewardProcess.start({ DATA_DIR: dir, MODEL: "openai-compatible:m", OPENAI_COMPATIBLE_BASE_URL: "http://127.0.0.1:9/v1", MCP_CONFIG: path })
    expect(await steward.exited).toBe(2)
    const stderr = steward.stderr.join("")
    expect(stderr).toMatch(/^steward: MCP_CONFIG: expected a JSON file .*mcpServers\.github: expected \{"command"/)
    expect(stderr.trim().split("\n")).toHaveLength(1)
  })
})
