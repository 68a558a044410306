import type { Tool } from "@modelcontextprotocol/sdk/types.js"
import type { Logger } from "pino"
import type { ToolDefinition } from "../tool/tool.ts"
import type { McpServerConfig } from "./config.ts"
import { connect, messageOf, withStderr, type Connection } from "./connect.ts"
import { toolName } from "./names.ts"
import { mcpTool } from "./tools.ts"

export type ServerState = "starting" | "running" | "restarting" | "failed" | "stopped"

export interface McpServerStatus {
  name: string
  state: ServerState
  transport?: Connection["transport"]
  /** The names the model sees (`<server>_<tool>`); empty unless running. */
  tools: string[]
  lastError?: string
  /** Connections lost or attempts failed in a row; reset once a connection has lasted. */
  failures: number
}

export interface Backoff {
  /** Delay before the first restart; it doubles with each failure in a row… */
  initialMs: number
  /** …up to this. */
  maxMs: number
  /** Failures in a row after which the server is given up (state "failed") until Steward restarts. */
  maxFailures: number
}

export interface ManagedServerOptions {
  toolTimeoutMs: number
  /** How long starting the server and the handshake (and listing its tools) may take. */
  startTimeoutMs: number
  backoff: Backoff
  log: Logger
  /** Names already used by other tools, which this server's tools must not take. */
  taken: () => ReadonlySet<string>
}

/** How long a server that stopped answering a call gets to answer a ping before it counts as gone. */
const PING_TIMEOUT_MS = 5_000

/**
 * One configured MCP server, kept connected: started, its tools listed, and — when it fails to
 * start, exits or stops answering — logged with the reason and restarted with backoff. Its
 * tools exist only while it runs.
 */
export class ManagedServer {
  private state: ServerState = "starting"
  private connection?: Connection
  private connectedAt = 0
  private current: ToolDefinition[] = []
  private lastError?: string
  private failures = 0
  private timer?: NodeJS.Timeout
  private pinging = false
  private attempts = 0

  constructor(
    readonly config: McpServerConfig,
    private readonly options: ManagedServerOptions,
  ) {}

  get name(): string {
    return this.config.name
  }

  /** The server's tools while it runs; none otherwise. */
  tools(): readonly ToolDefinition[] {
    return this.current
  }

  /** Settles after the first attempt, whether it connected or a restart was scheduled. */
  start(): Promise<void> {
    return this.attempt()
  }

  async stop(): Promise<void> {
    this.state = "stopped"
    clearTimeout(this.timer)
    const connection = this.connection
    this.connection = undefined
    this.current = []
    await connection?.client.close().catch(() => {})
  }

  status(): McpServerStatus {
    return {
      name: this.name,
      state: this.state,
      transport: this.connection?.transport,
      tools: this.current.map((tool) => tool.id),
      lastError: this.lastError,
      failures: this.failures,
    }
  }

  private async attempt(): Promise<void> {
    const { log } = this.options
    let connection: Connection | undefined
    this.attempts++
    try {
      connection = await connect(this.config.spec, {
        timeoutMs: this.options.startTimeoutMs,
        onStderrLine: (line) => log.debug({ mcp: this.name, stderr: line }, "MCP server stderr"),
      })
      const listed = await listTools(connection, this.options.startTimeoutMs)
      if (this.state === "stopped") return void (await connection.client.close())
      this.connection = connection
      this.connectedAt = Date.now()
      this.current = this.define(connection, listed)
      this.state = "running"
      const live = connection
      live.client.onclose = () => this.lost(live, withStderr("the connection closed", live.stderrTail()))
      live.client.onerror = (error) => log.debug({ mcp: this.name, err: error }, "MCP transport error")
      // The first start is reported with all the others by the hub; a restart by itself.
      if (this.attempts > 1) log.info({ mcp: this.status() }, `MCP server ${this.name} running again, tools: ${this.current.map((tool) => tool.id).join(", ") || "none"}`)
    } catch (error) {
      await connection?.client.close().catch(() => {})
      if (this.state === "stopped") return
      this.retry(connection ? withStderr(messageOf(error), connection.stderrTail()) : messageOf(error))
    }
  }

  private define(connection: Connection, listed: Tool[]): ToolDefinition[] {
    const taken = new Set(this.options.taken())
    const source = { server: this.name, client: connection.client, timeoutMs: this.options.toolTimeoutMs, onUnanswered: () => void this.check(connection) }
    return listed.map((tool) => {
      const definition = mcpTool(source, tool, toolName(this.name, tool.name, taken))
      taken.add(definition.id)
      return definition
    })
  }

  /** A call got no answer (a timeout, a broken connection): a server that does not answer a
   *  ping either is treated as gone, so a hung or vanished server is restarted. */
  private async check(connection: Connection): Promise<void> {
    if (this.pinging || connection !== this.connection) return
    this.pinging = true
    try {
      await connection.client.ping({ timeout: PING_TIMEOUT_MS })
    } catch (error) {
      this.lost(connection, `it did not answer a ping: ${messageOf(error)}`)
    } finally {
      this.pinging = false
    }
  }

  private lost(connection: Connection, reason: string): void {
    if (connection !== this.connection || this.state === "stopped") return
    this.connection = undefined
    this.current = []
    // A connection that lasted was a healthy server that died once, not a crash loop.
    if (Date.now() - this.connectedAt >= this.options.backoff.maxMs) this.failures = 0
    void connection.client.close().catch(() => {})
    this.retry(reason)
  }

  private retry(reason: string): void {
    const { log, backoff } = this.options
    this.lastError = reason
    this.failures++
    if (this.failures >= backoff.maxFailures) {
      this.state = "failed"
      log.error({ mcp: this.name, reason, failures: this.failures }, `MCP server ${this.name} failed ${this.failures} times in a row; given up until Steward restarts`)
      return
    }
    const delayMs = Math.min(backoff.initialMs * 2 ** (this.failures - 1), backoff.maxMs)
    this.state = "restarting"
    log.warn({ mcp: this.name, reason, retryInMs: delayMs }, `MCP server ${this.name} is down: ${reason}`)
    this.timer = setTimeout(() => void this.attempt(), delayMs)
    // A pending restart alone must not keep a finished process (a one-off status check) alive.
    this.timer.unref()
  }
}

/** Every tool, following the server's pages. */
async function listTools(connection: Connection, timeoutMs: number): Promise<Tool[]> {
  const tools: Tool[] = []
  // A server may offer only resources or prompts; asking it for tools would be an error.
  if (!connection.client.getServerCapabilities()?.tools) return tools
  let cursor: string | undefined
  do {
    const page = await connection.client.listTools(cursor ? { cursor } : undefined, { timeout: timeoutMs })
    tools.push(...page.tools)
    cursor = page.nextCursor
  } while (cursor)
  return tools
}
