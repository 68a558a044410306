import { sameSecret } from "../access/same-secret.ts"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import type { Logger } from "pino"
import { EVENT_NAME } from "../schedule/condition.ts"

/**
 * `POST /hooks/<name>` with `Authorization: Bearer <HOOKS_TOKEN>` raises the event <name> for
 * conditional tasks and triggers. 202 once the event is recorded; 401 without the token; 400
 * for a bad name (a path that does not decode included); 404 for anything else. The body is
 * ignored: an event is only a name.
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
      req.resume() // the body is not read, but must be drained for keep-alive
      const match = /^\/hooks\/([^/?]+)\/?(?:\?.*)?$/.exec(req.url ?? "")
      if (req.method !== "POST" || !match) return answer(404, { error: "not found: use POST /hooks/<name>" })
      if (!this.authorized(req.headers.authorization)) return answer(401, { error: "missing or wrong bearer token" })
      const name = decodedSegment(match[1]!)
      if (name === undefined || !EVENT_NAME.test(name)) return answer(400, { error: "an event name is 1-64 letters, digits, _ . -" })
      this.raise(name).then(
        () => answer(202, { raised: name }),
        (error) => {
          this.log.error({ err: error, event: name }, "could not raise an event")
          answer(500, { error: "could not record the event" })
        },
      )
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

/** A path segment with its percent-escapes decoded; undefined when they are malformed ("%", "%zz",
 *  bytes that are not UTF-8), which decodeURIComponent reports by throwing. */
function decodedSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment)
  } catch {
    return undefined
  }
}
