import { sameSecret } from "../access/same-secret.ts"
import { createServer, type IncomingMessage, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import type { Logger } from "pino"
import { EVENT_NAME } from "../schedule/condition.ts"
import { percentDecoded } from "../core/percent-decoded.ts"

/** The most a hook's body may hold (1 MiB); a larger one is refused with 413 unread. */
export const MAX_HOOK_BODY_BYTES = 1024 * 1024

/**
 * `POST /hooks/<name>` with `Authorization: Bearer <HOOKS_TOKEN>` raises the event <name> for
 * conditional tasks and triggers. 202 once the event is recorded; 401 without the token; 400
 * for a bad name (a path that does not decode included) or a body that is neither empty nor a
 * JSON object; 413 for a body over MAX_HOOK_BODY_BYTES; 404 for anything else. An event is only
 * a name: a well-formed body is not used.
 */
export class HooksServer {
  private server?: Server

  constructor(
    private readonly token: string,
    private readonly raise: (name: string) => Promise<void>,
    private readonly log: Logger,
  ) {}

  /** Listens on `host` (HOOKS_HOST, 127.0.0.1 by default: a hook from another machine is an
   *  explicit choice of the operator). */
  async start(port: number, host: string): Promise<number> {
    const server = createServer((req, res) => {
      const answer = (status: number, body: object) => {
        res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body))
      }
      const match = /^\/hooks\/([^/?]+)\/?(?:\?.*)?$/.exec(req.url ?? "")
      // Refused before the body is read: drained (not kept) for keep-alive.
      const refuse = (status: number, body: object) => {
        req.resume()
        answer(status, body)
      }
      if (req.method !== "POST" || !match) return refuse(404, { error: "not found: use POST /hooks/<name>" })
      if (!this.authorized(req.headers.authorization)) return refuse(401, { error: "missing or wrong bearer token" })
      const name = percentDecoded(match[1]!)
      if (name === undefined || !EVENT_NAME.test(name)) return refuse(400, { error: "an event name is 1-64 letters, digits, _ . -" })
      void readBody(req).then((body) => {
        if (body === "too large") return answer(413, { error: `the body is over ${MAX_HOOK_BODY_BYTES} bytes` })
        if (!emptyOrObject(body)) return answer(400, { error: "the body must be empty or a JSON object" })
        this.raise(name).then(
          () => answer(202, { raised: name }),
          (error) => {
            this.log.error({ err: error, event: name }, "could not raise an event")
            answer(500, { error: "could not record the event" })
          },
        )
      })
    })
    this.server = server
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject)
      server.listen(port, host, () => resolve())
    })
    return (server.address() as AddressInfo).port
  }

  async stop(): Promise<void> {
    const server = this.server
    if (!server) return
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }

  private authorized(header: string | undefined): boolean {
    return sameSecret(header?.replace(/^Bearer\s+/i, "") ?? "", this.token)
  }
}

/** The request's body, or "too large" once it passes MAX_HOOK_BODY_BYTES (by its declared length
 *  or as it arrives); the rest is drained, not kept. A broken connection reads as too large: the
 *  answer goes nowhere anyway. */
function readBody(req: IncomingMessage): Promise<Buffer | "too large"> {
  return new Promise((resolve) => {
    if (Number(req.headers["content-length"] ?? 0) > MAX_HOOK_BODY_BYTES) {
      req.resume()
      return resolve("too large")
    }
    const chunks: Buffer[] = []
    let size = 0
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size <= MAX_HOOK_BODY_BYTES) return void chunks.push(chunk)
      // Answered at once; what else comes is drained.
      chunks.length = 0
      resolve("too large")
    })
    req.on("end", () => resolve(size > MAX_HOOK_BODY_BYTES ? "too large" : Buffer.concat(chunks)))
    req.on("error", () => resolve("too large"))
  })
}

/** An empty body (whitespace only), or one JSON object. */
function emptyOrObject(body: Buffer): boolean {
  const text = body.toString("utf8").trim()
  if (text === "") return true
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === "object" && value !== null && !Array.isArray(value)
  } catch {
    return false
  }
}
