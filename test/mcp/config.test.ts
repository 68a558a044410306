import { writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { describe, expect, it } from "vitest"
import { ConfigError } from "../../src/config/config.ts"
import { readMcpConfig } from "../../src/mcp/config.ts"
import { sanitise, toolName } from "../../src/mcp/names.ts"
import { mcpConfigFile } from "./support.ts"

const BUILT_IN = ["read_file", "web_search", "delegate"]

describe("MCP_CONFIG", () => {
  it("reads stdio and remote servers in the common mcpServers format", () => {
    const path = mcpConfigFile({
      github: { command: "npx", args: ["-y", "server-github"], env: { TOKEN: "t" }, cwd: "servers", autoApprove: [] },
      "my docs": { url: "https://docs.example.com/mcp", headers: { Authorization: "Bearer x" } },
      legacy: { type: "sse", url: "http://127.0.0.1:1/sse" },
    })
    expect(readMcpConfig(path, BUILT_IN)).toEqual([
      { name: "github", spec: { kind: "stdio", command: "npx", args: ["-y", "server-github"], env: { TOKEN: "t" }, cwd: join(dirname(path), "servers") } },
      { name: "my_docs", spec: { kind: "remote", url: "https://docs.example.com/mcp", headers: { Authorization: "Bearer x" } } },
      { name: "legacy", spec: { kind: "remote", type: "sse", url: "http://127.0.0.1:1/sse", headers: {} } },
    ])
  })

  it.each([
    ["a file that is not there", () => "/nonexistent/mcp.json", /MCP_CONFIG: expected a JSON file .*ENOENT/],
    ["bad JSON", () => raw("{ not json"), /MCP_CONFIG: expected a JSON file .*JSON/],
    ["no mcpServers", () => mcpJson({ servers: {} }), /MCP_CONFIG: .*mcpServers: /],
    ["a server with neither command nor url", () => mcpConfigFile({ x: { args: [] } }), /MCP_CONFIG: .*mcpServers\.x: expected \{"command"/],
    ["a url that is not http(s)", () => mcpConfigFile({ x: { url: "ftp://a/b" } }), /MCP_CONFIG: .*mcpServers\.x/],
    ["args that are not strings", () => mcpConfigFile({ x: { command: "a", args: [1] } }), /MCP_CONFIG: .*mcpServers\.x/],
    ["two names that sanitise alike", () => mcpConfigFile({ "a b": { command: "a" }, a_b: { command: "b" } }), /MCP_CONFIG: servers "a_b" and another both become "a_b"/],
    ["a name that would pass for a built-in tool", () => mcpConfigFile({ web: { command: "a" } }), /MCP_CONFIG: server name "web" would make its tools look like the built-in tool web_search/],
  ])("rejects %s with one line naming MCP_CONFIG", (_, path, message) => {
    const error = (() => {
      try {
        readMcpConfig(path(), BUILT_IN)
      } catch (e) {
        return e
      }
    })()
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as ConfigError).variable).toBe("MCP_CONFIG")
    expect((error as Error).message).toMatch(message)
    expect((error as Error).message).not.toContain("\n")
  })
})

describe("tool names", () => {
  it("keeps A-Z, a-z, 0-9, _ and - and turns anything else into _", () => {
    expect(sanitise("get.issue/comments ok-1")).toBe("get_issue_comments_ok-1")
  })

  it("is <server>_<tool>, at most 64 characters, and unique", () => {
    expect(toolName("github", "create.issue", new Set())).toBe("github_create_issue")
    const long = toolName("srv", "x".repeat(100), new Set())
    expect(long).toHaveLength(64)
    const second = toolName("srv", "x".repeat(100), new Set([long]))
    expect(second).toHaveLength(64)
    expect(second.endsWith("_2")).toBe(true)
    expect(toolName("a", "b_c", new Set(["a_b_c", "a_b_c_2"]))).toBe("a_b_c_3")
  })
})

function raw(text: string): string {
  const path = mcpConfigFile({})
  writeFileSync(path, text)
  return path
}

function mcpJson(value: unknown): string {
  return raw(JSON.stringify(value))
}
