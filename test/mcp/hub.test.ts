import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { readMcpConfig } from "../../src/mcp/config.ts"
import { loadConfig } from "../../src/config/config.ts"
import { McpHub, mcpStatus } from "../../src/mcp/hub.ts"
import { MAX_RESULT_CHARS } from "../../src/mcp/result.ts"
import { ToolError, type ToolDefinition } from "../../src/tool/tool.ts"
import { startMcpHttpServer, type FakeMcpHttp } from "../fakes/mcp-http.ts"
import { waitFor } from "../support/wait-for.ts"
import { callTool, mcpConfigFile, recordingLogger, stdioServer } from "./support.ts"

const FAST = { initialMs: 50, maxMs: 400, maxFailures: 3 }
const hubs: McpHub[] = []
const https: FakeMcpHttp[] = []
afterEach(async () => {
  await Promise.all(hubs.splice(0).map((hub) => hub.stop()))
  await Promise.all(https.splice(0).map((server) => server.close()))
})

async function startHub(servers: Record<string, unknown>, toolTimeoutMs = 10_000, backoff = FAST) {
  const { log, lines } = recordingLogger()
  const hub = new McpHub(readMcpConfig(mcpConfigFile(servers), ["read_file"]), { toolTimeoutMs, builtIn: ["read_file"], log, backoff, startTimeoutMs: 25_000 })
  hubs.push(hub)
  await hub.start()
  const tool = (id: string): ToolDefinition => {
    const found = hub.families().flatMap((family) => family.members!()).find((t) => t.id === id)
    if (!found) throw new Error(`no tool ${id}; have ${hub.status().flatMap((s) => s.tools).join(", ")}`)
    return found
  }
  return { hub, lines, tool }
}

async function http(options: Parameters<typeof startMcpHttpServer>[0] = {}) {
  const server = await startMcpHttpServer(options)
  https.push(server)
  return server
}

describe("a stdio server", () => {
  it("offers its tools as <server>_<tool>, sanitised, and lists them in the start-up log", async () => {
    const { hub, lines } = await startHub({ fake: stdioServer() })
    const tools = ["fake_echo", "fake_add", "fake_env", "fake_big", "fake_fail", "fake_hang", "fake_crash", "fake_clock_now"]
    expect(hub.status()).toEqual([{ name: "fake", state: "running", transport: "stdio", tools, failures: 0 }])
    expect(hub.families().map((family) => family.id)).toEqual(["fake_*"])
    expect(hub.grants()).toEqual([
      { permission: "fake_*", pattern: "*", action: "allow" },
      { permission: "mcp_elicitation", pattern: "*", action: "allow" },
      { permission: "mcp_sampling", pattern: "*", action: "ask" },
    ])
    expect(lines.map((line) => line.msg)).toContain(`MCP server fake: running, tools: ${tools.join(", ")}`)
  })

  it("calls a tool and returns its text; shows the model the server's JSON Schema", async () => {
    const { tool } = await startHub({ fake: stdioServer() })
    const add = tool("fake_add")
    expect(await callTool(add, { a: 2, b: 3 })).toEqual({ text: "5" })
    expect(add.inputSchema).toMatchObject({ type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] })
    expect(add.parameters.safeParse({ a: "two" }).success).toBe(false)
    expect(add.pattern!({ a: 2, b: 3 }, "worker")).toBe('{"a":2,"b":3}')
  })

  it("starts the server with its env and cwd, and without Steward's own secrets", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "steward-mcp-cwd-"))
    process.env.OPENAI_API_KEY ??= "sk-test-secret"
    const { tool } = await startHub({ fake: stdioServer({ FAKE_GREETING: "hello" }, cwd) })
    expect(await callTool(tool("fake_env"), {})).toEqual({ text: `hello in ${cwd}; OPENAI_API_KEY unset` })
  })

  it("bounds a large result like other tool outputs", async () => {
    const { tool } = await startHub({ fake: stdioServer() })
    const result = await callTool(tool("fake_big"), {})
    expect(result.truncated).toBe(true)
    expect(result.text.length).toBeLessThan(MAX_RESULT_CHARS + 100)
    expect(result.text).toContain(`${50_000 - MAX_RESULT_CHARS} more characters cut`)
  })

  it("turns an error the tool reports into a tool error", async () => {
    const { tool } = await startHub({ fake: stdioServer() })
    await expect(callTool(tool("fake_fail"), {})).rejects.toThrow(new ToolError("fake_fail reported an error: the fake failed on purpose"))
  })

  it("times a hanging call out (MCP_TOOL_TIMEOUT) and keeps a server that still answers pings", async () => {
    const { hub, tool } = await startHub({ fake: stdioServer() }, 300)
    const started = Date.now()
    await expect(callTool(tool("fake_hang"), {})).rejects.toThrow(new ToolError("fake_hang did not answer within 0.3 s (MCP_TOOL_TIMEOUT); the call was cancelled"))
    expect(Date.now() - started).toBeLessThan(3000)
    expect(await callTool(tool("fake_echo"), { text: "still here" })).toEqual({ text: "echo: still here" })
    expect(hub.status()[0]).toMatchObject({ state: "running", failures: 0 })
  })

  it("is restarted when it dies, logged with its name and reason; meanwhile a call says it restarts and when to try again", async () => {
    // A restart 3 s away: long enough to call a tool while the server is down.
    const { hub, lines, tool } = await startHub({ fake: stdioServer() }, 10_000, { ...FAST, initialMs: 3_000, maxMs: 3_000 })
    await expect(callTool(tool("fake_crash"), {})).rejects.toThrow(ToolError)
    const down = lines.find((line) => line.msg.startsWith("MCP server fake is down"))
    expect(down).toMatchObject({ mcp: "fake", reason: expect.stringContaining("crashing on purpose") })
    expect(hub.status()[0]).toMatchObject({ state: "restarting", failures: 1 })
    expect(hub.health()[0]).toMatchObject({ name: "fake", state: "restarting", tools: 0 })
    // Why it stopped (its error, its stderr) is the owner's to read, not the model's to relay.
    const meanwhile = await callTool(tool("fake_echo"), { text: "x" }).catch((error: Error) => error.message)
    expect(meanwhile).toMatch(/^fake_echo: MCP server "fake" stopped and is restarting \(the owner's log says why\); try again in about [1-3] s$/)
    await waitFor(() => hub.status()[0]!.state === "running", 10_000)
    expect(await callTool(tool("fake_echo"), { text: "back" })).toEqual({ text: "echo: back" })
    expect(lines.map((line) => line.msg)).toContainEqual(expect.stringMatching(/^MCP server fake running again, tools: fake_echo/))
  })

  it("that fails to start is retried with backoff and given up after repeated failures, with the reason", async () => {
    const { hub, lines } = await startHub({ broken: stdioServer({ FAKE_FAIL_START: "FAKE_TOKEN is not set" }) })
    expect(hub.status()[0]).toMatchObject({ state: "restarting", tools: [], failures: 1, lastError: expect.stringContaining("FAKE_TOKEN is not set") })
    expect(lines.map((line) => line.msg)).toContainEqual(expect.stringMatching(/^MCP server broken: restarting: .*FAKE_TOKEN is not set/))
    await waitFor(() => hub.status()[0]!.state === "failed", 15_000)
    expect(hub.status()[0]).toMatchObject({ failures: FAST.maxFailures, lastError: expect.stringContaining("FAKE_TOKEN is not set") })
    const delays = lines.filter((line) => typeof line.retryInMs === "number").map((line) => line.retryInMs)
    expect(delays).toEqual([50, 100])
    expect(lines.at(-1)).toMatchObject({ msg: "MCP server broken failed 3 times in a row; given up until Steward restarts", level: 50 })
  })

  it("reports a command that does not exist", async () => {
    const { hub } = await startHub({ missing: { command: "/nonexistent/mcp-server" } })
    expect(hub.status()[0]).toMatchObject({ state: "restarting", lastError: expect.stringContaining("ENOENT") })
  })
})

describe("a remote server", () => {
  it("is reached over Streamable HTTP with its headers", async () => {
    const server = await http({ token: "secret" })
    const { hub, tool } = await startHub({ remote: { url: server.url, headers: { Authorization: "Bearer secret" } } })
    expect(hub.status()[0]).toMatchObject({ state: "running", transport: "streamable-http" })
    expect(await callTool(tool("remote_echo"), { text: "over http" })).toEqual({ text: "echo: over http" })
    expect(server.requests).not.toContain("GET /sse")
  })

  it("without the right headers is not running, and says why", async () => {
    const server = await http({ token: "secret" })
    const { hub } = await startHub({ remote: { url: server.url } })
    expect(hub.status()[0]).toMatchObject({ state: "restarting", tools: [], lastError: expect.stringMatching(/Streamable HTTP: .*unauthorized.*; SSE: .*401/) })
  })

  it("falls back to the old HTTP+SSE transport for a server that only speaks it", async () => {
    const server = await http({ legacySse: true })
    const { hub, tool } = await startHub({ old: { url: server.url } })
    expect(hub.status()[0]).toMatchObject({ state: "running", transport: "sse" })
    expect(server.requests.slice(0, 2)).toEqual(["POST /sse", "GET /sse"])
    expect(await callTool(tool("old_echo"), { text: "over sse" })).toEqual({ text: "echo: over sse" })
  })

  it("that goes away is noticed at the next call and reconnected once it is back", async () => {
    const server = await http()
    const { hub, tool } = await startHub({ remote: { url: server.url } })
    const echo = tool("remote_echo")
    await server.close()
    https.splice(https.indexOf(server), 1)
    await expect(callTool(echo, { text: "x" })).rejects.toThrow(/remote_echo: (MCP server "remote" could not be reached|the connection was lost during the call; MCP server "remote" stopped and is restarting)/)
    await waitFor(() => hub.status()[0]!.state !== "running", 10_000)
    expect(hub.health()[0]).toMatchObject({ state: "restarting", tools: 0 })
    await http({ port: server.port })
    await waitFor(() => hub.status()[0]!.state === "running", 10_000)
    expect(await callTool(tool("remote_echo"), { text: "again" })).toEqual({ text: "echo: again" })
  })
})

describe("a server that dies mid-call", () => {
  it.each([["Streamable HTTP", {}], ["HTTP+SSE", { legacySse: true }]])("over %s fails the call within 3 s, not at the timeout", async (_name, options) => {
    const server = await startMcpHttpServer(options)
    const { hub, tool } = await startHub({ remote: { url: server.url } }, 15_000)
    const started = Date.now()
    const call = callTool(tool("remote_hang"), {})
    await waitFor(() => server.requests.filter((request) => request.startsWith("POST")).length >= 3, 5_000)
    await server.close()
    await expect(call).rejects.toThrow(/remote_hang/)
    expect(Date.now() - started).toBeLessThan(3_000)
    await waitFor(() => hub.health()[0]!.state !== "up", 5_000)
  })
})

describe("mcpStatus", () => {
  it("starts the servers of MCP_CONFIG for one look and reports each one's state, tools and last error", async () => {
    const { log } = recordingLogger()
    const config = loadConfig({ MODEL: "openai:m", OPENAI_API_KEY: "k", MCP_CONFIG: mcpConfigFile({ fake: stdioServer(), gone: { url: "http://127.0.0.1:1/mcp" } }) })
    const statuses = await mcpStatus(config, log)
    expect(statuses).toEqual([
      expect.objectContaining({ name: "fake", state: "running", transport: "stdio", tools: expect.arrayContaining(["fake_echo"]) }),
      expect.objectContaining({ name: "gone", state: "restarting", tools: [], lastError: expect.stringContaining("Streamable HTTP") }),
    ])
  })

  it("is empty without MCP_CONFIG", async () => {
    expect(await mcpStatus(loadConfig({ MODEL: "openai:m", OPENAI_API_KEY: "k" }), recordingLogger().log)).toEqual([])
  })
})
