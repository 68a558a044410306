import { createServer, type Server } from "node:http"
import { webhookCallback, type Bot } from "grammy"
import type { Logger } from "pino"
import { listen } from "../../src/config/ports.ts"

export type WebhookServer = { port: number; close(): Promise<void> }

/**
 * Takes Telegram's webhook POSTs on `port`. grammY checks the secret token header on every
 * request (401 without it), which is what keeps anyone who finds the URL from posing as a user.
 */
export async function listenForUpdates(bot: Bot, options: { port: number; host?: string; secret: string }, log: Logger): Promise<WebhookServer> {
  const handle = webhookCallback(bot, "http", { secretToken: options.secret })
  const server: Server = createServer((req, res) => {
    if (req.method !== "POST") {
      res.writeHead(405, { allow: "POST" }).end()
      return
    }
    handle(req, res).catch((error: unknown) => {
      // A 500 makes Telegram deliver the update again later.
      log.error({ err: error }, "webhook update failed")
      if (!res.headersSent) res.writeHead(500).end()
    })
  })
  const port = await listen(server, "TELEGRAM_WEBHOOK_PORT", options.port, options.host)
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        // Updates being handled finish; idle keep-alive connections would hold close() open.
        server.close(() => resolve())
        server.closeIdleConnections()
      }),
  }
}
