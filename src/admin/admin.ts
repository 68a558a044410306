import type { Logger } from "pino"
import type { App } from "../app.ts"
import type { Channel } from "../channel/channel.ts"
import type { Config } from "../config/config.ts"
import { mcpViews } from "../console/mcp-state.ts"
import { ConsoleRoutes } from "../console/routes.ts"
import { redactor, secretsOf } from "../log/redact.ts"
import { checkHealth } from "./health.ts"
import type { Metrics } from "./metrics.ts"
import { AdminServer } from "./server.ts"

const HEALTHY = { ok: true, reconnects: 0 }

/** Starts /healthz and /metrics on ADMIN_HOST:ADMIN_PORT for a running app (unless ADMIN_PORT=off),
 *  and the owner console beside them when ADMIN_TOKEN is set. */
export async function startAdmin(config: Config, app: App, channels: Channel[], metrics: Metrics, log: Logger): Promise<{ server: AdminServer; port: number } | undefined> {
  if (config.admin.port === undefined) return undefined
  // In a cluster a channel only the leader runs (Telegram polling) is none of this process's health.
  const channelHealth = () => channels.filter((channel) => app.runsHere(channel)).map((channel) => ({ name: channel.name, health: channel.health?.() ?? HEALTHY }))
  metrics.watch({
    channels: channelHealth,
    queueDepth: async () => app.supervisor.tasks.queueDepth(),
    outboxBacklog: async () => app.supervisor.outbox.backlog,
  })
  const probe = () => app.store.probe()
  const owner = [...config.allowedUsers.users][0]
  const ownerConsole = config.admin.token
    ? new ConsoleRoutes(config.admin.token, { store: app.store, channels: channelHealth, mcp: () => mcpViews(app.mcp), ownerZone: () => app.supervisor.profiles.timeZoneOf(owner ?? ""), redact: redactor(secretsOf(config)) }, log.child({ part: "console" }))
    : undefined
  // Each MCP server's state is reported; a server down does not make Steward unhealthy.
  const server = new AdminServer(async () => ({ ...(await checkHealth(probe, channelHealth())), mcp: app.mcp?.health() ?? [] }), metrics, log, ownerConsole)
  const port = await server.start(config.admin.port, config.admin.host)
  log.info({ host: config.admin.host, port }, `admin endpoints: GET /healthz, GET /metrics${ownerConsole ? "; the owner console at /" : ""}`)
  return { server, port }
}
