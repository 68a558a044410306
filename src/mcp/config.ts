import { readFileSync } from "node:fs"
import { dirname, resolve } from "node:path"
import { z, ZodError } from "zod"
import { ConfigError } from "../config/config.ts"
import { sanitise, SERVER_NAME_MAX } from "./names.ts"

// The format Claude Desktop, Cursor and most MCP clients read, so an owner can copy a server's
// documented snippet as it is. Objects are not strict: those clients add keys of their own
// ("disabled", "autoApprove", …) that have no meaning here and must not make the file invalid.
const StdioServer = z.object({
  type: z.literal("stdio").optional(),
  command: z.string().min(1, "expected the command that starts the server"),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({}),
  cwd: z.string().min(1).optional(),
})

const RemoteServer = z.object({
  // "http" (and "streamable-http") try Streamable HTTP, then SSE; "sse" goes straight to SSE.
  type: z.enum(["http", "streamable-http", "sse"]).optional(),
  url: z.url({ protocol: /^https?$/, error: "expected an http(s) URL" }),
  headers: z.record(z.string(), z.string()).default({}),
})

const ServerEntry = z.union([StdioServer, RemoteServer], { error: 'expected {"command", "args"?, "env"?, "cwd"?} or {"url", "headers"?}' })

const McpFile = z.object({ mcpServers: z.record(z.string().min(1), ServerEntry) })

export type StdioServerConfig = z.infer<typeof StdioServer> & { kind: "stdio" }
export type RemoteServerConfig = z.infer<typeof RemoteServer> & { kind: "remote" }

export interface McpServerConfig {
  /** The name tools are prefixed with: the file's key, sanitised. */
  name: string
  spec: StdioServerConfig | RemoteServerConfig
}

const EXPECTED = 'expected a JSON file {"mcpServers": {"<name>": {"command", "args"?, "env"?, "cwd"?} | {"url", "headers"?}}}'

/**
 * Reads MCP_CONFIG. Every mistake — a missing file, bad JSON, a wrong shape, two names that
 * sanitise alike, a name that would let its tools pass for a built-in one — is a ConfigError
 * naming MCP_CONFIG, reported like a bad variable.
 */
export function readMcpConfig(path: string, builtIn: readonly string[]): McpServerConfig[] {
  const fail = (reason: string) => new ConfigError("MCP_CONFIG", `MCP_CONFIG: ${reason} (${path})`)
  let json: unknown
  try {
    json = JSON.parse(readFileSync(path, "utf8"))
  } catch (error) {
    throw fail(`${EXPECTED}: ${error instanceof Error ? error.message : String(error)}`)
  }
  let file: z.infer<typeof McpFile>
  try {
    file = McpFile.parse(json)
  } catch (error) {
    const issue = (error as ZodError).issues[0]!
    throw fail(`${EXPECTED}: ${issue.path.join(".") || "file"}: ${issue.message}`)
  }
  const servers: McpServerConfig[] = []
  for (const [key, entry] of Object.entries(file.mcpServers)) {
    const name = sanitise(key).slice(0, SERVER_NAME_MAX)
    const twin = servers.find((server) => server.name === name)
    if (twin) throw fail(`servers "${key}" and another both become "${name}" once reduced to A-Z, a-z, 0-9, _ and -; rename one`)
    // The worker role is granted `<name>_*`; that grant must not reach a built-in tool.
    const shadowed = builtIn.find((id) => id.startsWith(`${name}_`))
    if (shadowed) throw fail(`server name "${key}" would make its tools look like the built-in tool ${shadowed}; rename it`)
    // A relative cwd is relative to the file, as the file is where the owner wrote it.
    const spec: McpServerConfig["spec"] =
      "command" in entry ? { ...entry, kind: "stdio", cwd: entry.cwd === undefined ? undefined : resolve(dirname(path), entry.cwd) } : { ...entry, kind: "remote" }
    servers.push({ name, spec })
  }
  return servers
}
