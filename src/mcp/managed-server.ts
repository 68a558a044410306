import type { Tool } from "@modelcontextprotocol/sdk/types.js"
import type { Logger } from "pino"
import { ToolError, type ToolContext, type ToolDefinition } from "../tool/tool.ts"
import { formatResource, type McpToolOutput } from "./result.ts"
import type { McpServerConfig } from "./config.ts"
import { stewardClient } from "./client.ts"
import { connect, messageOf, withStderr, type Connection } from "./connect.ts"
import { toolName } from "./names.ts"
import { CallerRequests } from "./server-requests.ts"
import { callable, mcpTool, type McpToolSource } from "./tools.ts"

export type ServerState = "starting" | "running" | "restarting" | "failed" | "stopped"

export interface McpServerStatus {
  name: string
  state: ServerState
  transport?: Connection["transport"]
  /** The names the model sees (`<server>_<tool>`): the last list while it restarts, none once it failed. */
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
  /** MCP_TOOL_MAX_SECONDS, in ms: a call's limit however often it reports progress. */
  toolMaxMs: number
  /** MCP_ELICITATION_TIMEOUT, in ms. */
  elicitationTimeoutMs: number
  /** How long starting the server and the handshake (and listing its tools) may take. */
  startTimeoutMs: number
  backoff: Backoff
  log: Logger
  /** Names already used by other tools, which this server's tools must not take. */
  taken: () => ReadonlySet<string>
}

/** How long a server that stopped answering a call gets to answer a ping before it counts as gone. */
const PING_TIMEOUT_MS = 5_000
/** After a transport error (an HTTP stream broken mid-call) a live server answers a ping at once;
 *  a dead one fails the calls under way within about this long. */
const TRANSPORT_PING_TIMEOUT_MS = 2_000

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
  private restartAt = 0
  /** A re-listing under way after tools/list_changed, or a reconnection after a lost session. */
  private changing?: Promise<void>
  private relisting?: Promise<void>
  private relistAgain = false
  private instructionsText = ""
  private readonly requests: CallerRequests
  private readonly source: McpToolSource

  constructor(
    readonly config: McpServerConfig,
    private readonly options: ManagedServerOptions,
  ) {
    this.requests = new CallerRequests(config.name, {
      elicitationTimeoutMs: options.elicitationTimeoutMs,
      log: options.log,
      client: () => this.connection?.client,
      toolsChanged: () => this.toolsChanged(),
    })
    this.source = {
      server: config.name,
      timeoutMs: options.toolTimeoutMs,
      maxMs: options.toolMaxMs,
      calls: this.requests.calls,
      client: () => {
        if (this.connection) return this.connection.client
        throw new ToolError(`${this.whyDown() ?? `MCP server "${this.name}" is not connected`}`)
      },
      beforeCall: (ctx) => this.requests.beforeCall(ctx),
      onUnanswered: () => this.connection && void this.check(this.connection, PING_TIMEOUT_MS),
      reconnect: () => this.reconnect(),
      whyDown: () => this.whyDown(),
    }
  }

  get name(): string {
    return this.config.name
  }

  /** The server's tools while it runs or restarts (a call then says it restarts); none once it failed. */
  tools(): readonly ToolDefinition[] {
    return this.current
  }

  /** Settles when a change of the tool list under way (tools/list_changed, a reconnection) is done. */
  settled(): Promise<void> {
    return this.changing ?? Promise.resolve()
  }

  /** The server's `instructions` from its handshake ("" when none or not connected). */
  instructions(): string {
    return this.connection ? this.instructionsText : ""
  }

  /** One of the server's resources, formatted like a tool result (within its time limit). */
  async readResource(uri: string, ctx: ToolContext): Promise<McpToolOutput> {
    const client = this.source.client()
    if (!client.getServerCapabilities()?.resources) throw new ToolError(`MCP server "${this.name}" offers no resources`)
    const done = await this.requests.calls.enter(ctx)
    try {
      await this.requests.beforeCall(ctx)
      return await formatResource(await client.readResource({ uri }, { timeout: this.options.toolTimeoutMs, signal: ctx.abort }), { server: this.name, ctx })
    } catch (error) {
      ctx.abort.throwIfAborted()
      throw error instanceof ToolError ? error : new ToolError(`read_resource ${this.name} ${uri} failed: ${messageOf(error)}`)
    } finally {
      done()
    }
  }

  /** For the model, that the server's tools cannot be called now, and when they can be again;
   *  undefined while it runs. Not why: the reason (an error, the server's stderr) can name hosts
   *  and credentials, and the model relays what it reads — it is in the log, `status` and `doctor`. */
  whyDown(): string | undefined {
    if (this.state === "running") return undefined
    if (this.state === "restarting") {
      const seconds = Math.max(1, Math.ceil((this.restartAt - Date.now()) / 1000))
      return `MCP server "${this.name}" stopped and is restarting (the owner's log says why); try again in about ${seconds} s`
    }
    if (this.state === "starting") return `MCP server "${this.name}" is starting; try again in a few seconds`
    return `MCP server "${this.name}" is down until Steward restarts (the owner's log says why)`
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
    this.requests.connected()
    try {
      connection = await connect(this.config.spec, {
        timeoutMs: this.options.startTimeoutMs,
        onStderrLine: (line) => log.debug({ mcp: this.name, stderr: line }, "MCP server stderr"),
        newClient: () => stewardClient(this.requests),
      })
      const listed = await listTools(connection, this.options.startTimeoutMs)
      if (this.state === "stopped") return void (await connection.client.close())
      this.connection = connection
      this.connectedAt = Date.now()
      this.current = this.define(listed)
      this.instructionsText = connection.client.getInstructions()?.trim() ?? ""
      this.state = "running"
      const live = connection
      live.client.onclose = () => this.lost(live, withStderr("the connection closed", live.stderrTail()))
      // A broken stream (an HTTP server gone mid-call) is an error, not a close: a ping tells
      // a live server from a dead one, and a dead one fails the calls under way at once.
      live.client.onerror = (error) => {
        log.debug({ mcp: this.name, err: error }, "MCP transport error")
        void this.check(live, TRANSPORT_PING_TIMEOUT_MS)
      }
      // The first start is reported with all the others by the hub; a restart by itself.
      if (this.attempts > 1) log.info({ mcp: this.status() }, `MCP server ${this.name} running again, tools: ${this.current.map((tool) => tool.id).join(", ") || "none"}`)
    } catch (error) {
      await connection?.client.close().catch(() => {})
      if (this.state === "stopped") return
      this.retry(connection ? withStderr(messageOf(error), connection.stderrTail()) : messageOf(error))
    }
  }

  private define(listed: Tool[]): ToolDefinition[] {
    const taken = new Set(this.options.taken())
    return listed.filter(callable).map((tool) => {
      const definition = mcpTool(this.source, tool, toolName(this.name, tool.name, taken))
      taken.add(definition.id)
      return definition
    })
  }

  /** tools/list_changed: the list is read again; the next model step waits for it (settled). A
   *  change announced while a listing is under way is read once after it, however many came:
   *  a server that announces changes in a loop gets one listing at a time, not one per notice. */
  private toolsChanged(): void {
    const connection = this.connection
    if (!connection) return
    if (this.relisting) return void (this.relistAgain = true)
    const relisting = listTools(connection, this.options.startTimeoutMs).then(
      (listed) => {
        if (connection !== this.connection) return
        const before = this.current.map((tool) => tool.id).join(", ")
        this.current = this.define(listed)
        const after = this.current.map((tool) => tool.id).join(", ")
        if (after !== before) this.options.log.info({ mcp: this.name }, `MCP server ${this.name} changed its tools: ${after || "none"}`)
      },
      (error: unknown) => this.options.log.warn({ mcp: this.name, err: error }, `MCP server ${this.name} changed its tools but could not list them`),
    )
    this.relisting = this.track(relisting).finally(() => {
      this.relisting = undefined
      if (!this.relistAgain) return
      this.relistAgain = false
      this.toolsChanged()
    })
  }

  /** The session was lost (a Streamable HTTP server restarted while idle): a new connection at
   *  once, not a failure — the call that found out is tried once more on it. */
  private reconnect(): Promise<void> {
    const connection = this.connection
    if (this.changing) return this.changing
    if (!connection) return Promise.resolve()
    this.options.log.info({ mcp: this.name }, `MCP server ${this.name} lost the session; reconnecting`)
    this.connection = undefined
    connection.client.onclose = undefined
    void connection.client.close().catch(() => {})
    this.state = "restarting"
    return this.track(this.attempt())
  }

  private track(change: Promise<void>): Promise<void> {
    const tracked = change.finally(() => {
      if (this.changing === tracked) this.changing = undefined
    })
    this.changing = tracked
    return tracked
  }

  /** A call got no answer (a timeout, a broken connection): a server that does not answer a
   *  ping either is treated as gone, so a hung or vanished server is restarted. */
  private async check(connection: Connection, timeoutMs: number): Promise<void> {
    if (this.pinging || connection !== this.connection) return
    this.pinging = true
    try {
      await connection.client.ping({ timeout: timeoutMs })
    } catch (error) {
      this.lost(connection, `it did not answer a ping: ${messageOf(error)}`)
    } finally {
      this.pinging = false
    }
  }

  private lost(connection: Connection, reason: string): void {
    if (connection !== this.connection || this.state === "stopped") return
    this.connection = undefined
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
      this.current = []
      log.error({ mcp: this.name, reason, failures: this.failures }, `MCP server ${this.name} failed ${this.failures} times in a row; given up until Steward restarts`)
      return
    }
    const delayMs = Math.min(backoff.initialMs * 2 ** (this.failures - 1), backoff.maxMs)
    this.state = "restarting"
    this.restartAt = Date.now() + delayMs
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
