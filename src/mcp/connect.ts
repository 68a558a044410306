import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { McpServerConfig, RemoteServerConfig, StdioServerConfig } from "./config.ts"

// A server's last words on stderr usually say why it died ("GITHUB_TOKEN is not set"); a few
// lines are enough for the log and the status, and keep a chatty server from filling memory.
const STDERR_TAIL_LINES = 5

export interface Connection {
  client: Client
  transport: "stdio" | "streamable-http" | "sse"
  /** The newest lines the server wrote to stderr (stdio servers). */
  stderrTail(): string
}

export interface ConnectOptions {
  /** Milliseconds the start and the initialize handshake may take. */
  timeoutMs: number
  onStderrLine?: (line: string) => void
  /** A fresh client for each try (a Streamable HTTP try that fails leaves its client closed). */
  newClient: () => Client
}

/** Starts or reaches one server and completes the MCP handshake with it. */
export async function connect(spec: McpServerConfig["spec"], options: ConnectOptions): Promise<Connection> {
  return spec.kind === "stdio" ? connectStdio(spec, options) : connectRemote(spec, options)
}

async function connectStdio(spec: StdioServerConfig, options: ConnectOptions): Promise<Connection> {
  // The SDK merges `env` into a safe minimal environment (PATH, HOME, …), so Steward's own
  // secrets (model keys, bot tokens) never reach a server that was not given them.
  const transport = new StdioClientTransport({ command: spec.command, args: spec.args, env: spec.env, cwd: spec.cwd, stderr: "pipe" })
  const tail: string[] = []
  let partial = ""
  transport.stderr?.on("data", (chunk: Buffer) => {
    const lines = (partial + chunk.toString("utf8")).split("\n")
    partial = lines.pop() ?? ""
    for (const line of lines.map((l) => l.trimEnd()).filter(Boolean)) {
      options.onStderrLine?.(line)
      tail.push(line)
      if (tail.length > STDERR_TAIL_LINES) tail.shift()
    }
  })
  const client = options.newClient()
  const stderrTail = () => [...tail, partial.trim()].filter(Boolean).join(" | ")
  try {
    await connectOrClose(client, transport, options.timeoutMs)
  } catch (error) {
    // "Connection closed" says little; what the server wrote before exiting says why.
    throw new Error(withStderr(messageOf(error), stderrTail()))
  }
  return { client, transport: "stdio", stderrTail }
}

/** Streamable HTTP first; a server that refuses it may be an older one that speaks HTTP+SSE. */
async function connectRemote(spec: RemoteServerConfig, options: ConnectOptions): Promise<Connection> {
  const url = new URL(spec.url)
  const requestInit = { headers: spec.headers }
  if (spec.type !== "sse") {
    const client = options.newClient()
    try {
      await connectOrClose(client, new StreamableHTTPClientTransport(url, { requestInit }), options.timeoutMs)
      return { client, transport: "streamable-http", stderrTail: () => "" }
    } catch (streamable) {
      try {
        return await connectSse(url, requestInit, options)
      } catch (sse) {
        throw new Error(`Streamable HTTP: ${messageOf(streamable)}; SSE: ${messageOf(sse)}`)
      }
    }
  }
  return connectSse(url, requestInit, options)
}

async function connectSse(url: URL, requestInit: RequestInit, options: ConnectOptions): Promise<Connection> {
  const client = options.newClient()
  await connectOrClose(client, new SSEClientTransport(url, { requestInit }), options.timeoutMs)
  return { client, transport: "sse", stderrTail: () => "" }
}

/** A handshake that fails must not leave a child process or an open stream behind. */
async function connectOrClose(client: Client, transport: Parameters<Client["connect"]>[0], timeoutMs: number): Promise<void> {
  try {
    await client.connect(transport, { timeout: timeoutMs })
  } catch (error) {
    await client.close().catch(() => {})
    throw error
  }
}

export function withStderr(reason: string, stderrTail: string): string {
  return stderrTail ? `${reason}; stderr: ${stderrTail}` : reason
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
