import { timingSafeEqual } from "node:crypto"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { webhookCallback, type Bot } from "grammy"
import type { Update } from "grammy/types"
import type { Logger } from "pino"
import { listen } from "../../src/config/ports.ts"

export type WebhookServer = { port: number; close(): Promise<void> }

const SECRET_HEADER = "x-telegram-bot-api-secret-token"
/** Telegram's updates are a few kilobytes; a body this large is not one of them. */
const MAX_BODY_BYTES = 1024 * 1024

/** A request that is not an update Telegram sent: answered with `status`, never handed on. */
class Refused extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message)
  }
}

/**
 * Takes Telegram's webhook POSTs on `port`. The secret token header is checked on every request
 * before its body is read (401 without it), which is what keeps anyone who finds the URL from
 * posing as a user. Whatever else arrives — another method, a body that is too large, not JSON
 * or not an update — gets a 4xx and goes no further; only a failure to take a real update is a
 * 500, which makes Telegram deliver it again later.
 */
export async function listenForUpdates(bot: Bot, options: { port: number; host?: string; secret: string }, log: Logger): Promise<WebhookServer> {
  // grammY still does the handling (and checks the secret once more); the request is read here.
  const handle = webhookCallback(bot, "callback", { secretToken: options.secret })
  const secret = Buffer.from(options.secret)
  const serve = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method !== "POST") throw new Refused(405, "only POST")
    const given = req.headers[SECRET_HEADER]
    const header = typeof given === "string" ? given : undefined
    if (header === undefined || !sameSecret(Buffer.from(header), secret)) throw new Refused(401, "wrong secret token")
    const update = updateOf(await readBody(req))
    await handle(update, (json: string) => void res.writeHead(200, { "content-type": "application/json" }).end(json), header, () => void res.writeHead(401).end())
    if (!res.headersSent) res.writeHead(200).end()
  }
  const server: Server = createServer((req, res) => {
    serve(req, res).catch((error: unknown) => {
      if (error instanceof Refused) {
        if (error.status === 405) res.setHeader("allow", "POST")
        log.debug({ status: error.status }, `webhook request refused: ${error.message}`)
      } else log.error({ err: error }, "webhook update failed")
      if (res.headersSent) return
      // The rest of a refused body is not read: close the connection rather than drain it.
      if (error instanceof Refused && !req.complete) res.setHeader("connection", "close")
      res.writeHead(error instanceof Refused ? error.status : 500).end()
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

function sameSecret(given: Buffer, expected: Buffer): boolean {
  return given.length === expected.length && timingSafeEqual(given, expected)
}

/** The body, up to MAX_BODY_BYTES. Not an async iterator: leaving one early destroys the socket,
 *  and the 413 could not be sent. */
function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size <= MAX_BODY_BYTES) return void chunks.push(chunk)
      req.off("data", onData).pause()
      reject(new Refused(413, `body over ${MAX_BODY_BYTES} bytes`))
    }
    req.on("data", onData)
    req.once("end", () => resolve(Buffer.concat(chunks)))
    // A client that goes away mid-body: settles the promise (a no-op once settled), never throws.
    req.once("error", () => reject(new Refused(400, "the request body did not arrive whole")))
    req.once("close", () => reject(new Refused(400, "the request body did not arrive whole")))
  })
}

/** The body as an update: a JSON object with a whole-number update_id. */
function updateOf(body: Buffer): Update {
  let parsed: unknown
  try {
    parsed = JSON.parse(body.toString("utf8"))
  } catch {
    throw new Refused(400, "the body is not JSON")
  }
  const updateId = typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as { update_id?: unknown }).update_id : undefined
  if (!Number.isSafeInteger(updateId)) throw new Refused(400, "the body is not an update")
  return parsed as Update
}
