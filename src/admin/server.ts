import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { Logger } from "pino"
import { listen } from "../config/ports.ts"
import type { HealthReport } from "./health.ts"
import type { Metrics } from "./metrics.ts"
import { stewardVersion } from "../version/version.ts"
import { send, sendJson } from "../console/http.ts"

/** The owner console's part of the admin server (src/console/routes.ts): true when it answered. */
export interface ConsoleHandler {
  handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean>
}

/**
 * The operator's HTTP endpoints: `GET /healthz` (200 with the report when healthy, 503 with
 * the reasons otherwise) and `GET /metrics` (Prometheus text), neither authenticated; with
 * ADMIN_TOKEN, the owner console beside them, which signs its user in. It binds 127.0.0.1
 * unless ADMIN_HOST says otherwise.
 */
export class AdminServer {
  private server?: Server

  constructor(
    private readonly health: () => Promise<HealthReport>,
    private readonly metrics: Metrics,
    private readonly log: Logger,
    private readonly console?: ConsoleHandler,
  ) {}

  /** Resolves with the port it listens on (`port` 0: any free one). */
  async start(port: number, host: string): Promise<number> {
    this.server = createServer((req, res) => {
      const path = req.url?.split("?")[0] ?? "/"
      // Every answer carries the console's security headers, these too: a page that frames or
      // sniffs /healthz or a 404 is as unwelcome as one that frames the console.
      const answer = (status: number, type: string, body: string) => send(res, status, type, body)
      const route = req.method !== "GET" && req.method !== "HEAD" ? undefined : path === "/healthz" ? this.healthz() : path === "/metrics" ? this.metricsText() : undefined
      if (!route) return void this.other(req, res, path)
      req.resume()
      route.then(
        ({ status, type, body }) => answer(status, type, body),
        (error: unknown) => {
          this.log.error({ err: error, path }, "admin endpoint failed")
          sendJson(res, 500, { error: error instanceof Error ? error.message : String(error) })
        },
      )
    })
    return listen(this.server, "ADMIN_PORT", port, host)
  }

  /** The console's paths, when it is on; 404 for anything else. */
  private async other(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    try {
      if (await this.console?.handle(req, res, path)) return
      req.resume()
      sendJson(res, 404, { error: "not found: GET /healthz or /metrics" })
    } catch (error) {
      this.log.error({ err: error, path }, "owner console request failed")
      req.resume()
      const body = { error: "the console could not answer; see Steward's log" }
      if (res.headersSent) res.end(JSON.stringify(body))
      else sendJson(res, 500, body)
    }
  }

  async stop(): Promise<void> {
    const server = this.server
    if (!server) return
    this.server = undefined
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }

  private async healthz() {
    const report = await this.health()
    const body = { status: report.ok ? "ok" : "unhealthy", version: stewardVersion(), uptimeSeconds: Math.round(process.uptime()), ...report }
    return { status: report.ok ? 200 : 503, type: "application/json", body: JSON.stringify(body) }
  }

  private async metricsText() {
    return { status: 200, type: this.metrics.registry.contentType, body: await this.metrics.registry.metrics() }
  }
}
