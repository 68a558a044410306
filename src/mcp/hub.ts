import type { Logger } from "pino"
import type { Config } from "../config/config.ts"
import type { Ruleset } from "../permission/permission.ts"
import { builtInToolIds } from "../tool/registry.ts"
import { toolFamily, type ToolDefinition } from "../tool/tool.ts"
import { readMcpConfig, type McpServerConfig } from "./config.ts"
import { ManagedServer, type Backoff, type McpServerStatus } from "./managed-server.ts"

export type { McpServerStatus } from "./managed-server.ts"

// 1 s, 2 s, 4 s … 60 s: quick for a blip, gentle on a server that keeps crashing; ten failures
// in a row (about five minutes) and it is left alone until Steward restarts.
const DEFAULT_BACKOFF: Backoff = { initialMs: 1_000, maxMs: 60_000, maxFailures: 10 }
// npx-launched servers download themselves on their first start.
const START_TIMEOUT_MS = 30_000

export interface McpHubOptions {
  toolTimeoutMs: number
  /** The built-in tools' ids, which MCP tools must not take. */
  builtIn: readonly string[]
  log: Logger
  backoff?: Backoff
  startTimeoutMs?: number
}

/** Every MCP server of MCP_CONFIG, each kept connected by a ManagedServer. */
export class McpHub {
  private readonly servers: ManagedServer[]
  private readonly log: Logger

  constructor(configs: readonly McpServerConfig[], options: McpHubOptions) {
    this.log = options.log
    const builtIn = new Set(options.builtIn)
    this.servers = configs.map(
      (config) =>
        new ManagedServer(config, {
          toolTimeoutMs: options.toolTimeoutMs,
          startTimeoutMs: options.startTimeoutMs ?? START_TIMEOUT_MS,
          backoff: options.backoff ?? DEFAULT_BACKOFF,
          log: options.log,
          taken: () => new Set([...builtIn, ...this.servers.filter((s) => s.name !== config.name).flatMap((s) => s.tools().map((tool) => tool.id))]),
        }),
    )
  }

  /** Starts every server at once and settles when each has connected or scheduled a restart;
   *  then logs one line per server with its state and tools. */
  async start(): Promise<void> {
    const { log } = this
    await Promise.all(this.servers.map((server) => server.start()))
    for (const status of this.status()) {
      const line = `MCP server ${status.name}: ${status.state}${status.state === "running" ? `, tools: ${status.tools.join(", ") || "none"}` : `: ${status.lastError}`}`
      if (status.state === "running") log.info({ mcp: status }, line)
      else log.warn({ mcp: status }, line)
    }
  }

  /** One stand-in per server (`<server>_*`) that the agent loop replaces with the server's tools of the moment. */
  families(): ToolDefinition[] {
    return this.servers.map((server) => toolFamily(`${server.name}_*`, () => server.tools()))
  }

  /** Workers may use every MCP tool unless PERMISSIONS_FILE, which comes after, says otherwise. */
  grants(): Ruleset {
    return this.servers.map((server) => ({ permission: `${server.name}_*`, pattern: "*", action: "allow" as const }))
  }

  status(): McpServerStatus[] {
    return this.servers.map((server) => server.status())
  }

  async stop(): Promise<void> {
    await Promise.all(this.servers.map((server) => server.stop()))
  }
}

/** The hub for MCP_CONFIG, started; undefined when it is not set. A bad file throws ConfigError. */
export async function startMcp(config: Config, log: Logger, builtIn: readonly string[]): Promise<McpHub | undefined> {
  if (!config.mcp.configFile) return undefined
  const hub = new McpHub(readMcpConfig(config.mcp.configFile, builtIn), { toolTimeoutMs: config.mcp.toolTimeoutMs, builtIn, log })
  await hub.start()
  return hub
}

/**
 * Each server of MCP_CONFIG, its state, tools and last error, as a one-off check (the `doctor`
 * command): the servers are started, given their first attempt, and stopped again.
 */
export async function mcpStatus(config: Config, log: Logger): Promise<McpServerStatus[]> {
  const hub = await startMcp(config, log, builtInToolIds())
  if (!hub) return []
  try {
    return hub.status()
  } finally {
    await hub.stop()
  }
}
