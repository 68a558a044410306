import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { ListenOptions } from "node:net"
import { HTTPModuleFunctions as http, HTTPResponseAck, type App, type BufferedIncomingMessage, type Logger, type Receiver, type ReceiverEvent } from "@slack/bolt"
import { SlackSignature } from "./signature.ts"

/** A gap between requests this long ends a burst. */
const QUIET_MS = 5
/** Under steady traffic, events are routed at least this often all the same. */
const MAX_HOLD_MS = 100

export type AckFirstReceiverOptions = {
  signingSecret: string
  /** The one path Slack posts events and interactivity to. */
  path: string
  logger: Logger
}

const header = (req: IncomingMessage, name: string) => {
  const value = req.headers[name]
  return Array.isArray(value) ? undefined : value
}

type Held = { event: ReceiverEvent; request: IncomingMessage; response: ServerResponse; acknowledged?: () => void }

/**
 * Slack's Events API over HTTP: checks each request's signature (a bad or stale one gets 401),
 * answers `url_verification` itself, answers the `ssl_check` Slack sends to a slash command's
 * URL, and hands verified events to Bolt in bursts: they wait until requests stop arriving
 * (QUIET_MS, at most MAX_HOLD_MS), and then Bolt routes them in the order they came. An event is
 * answered 200 once the core has stored it, 500 when it could not (StoreFirstReceiver holds the
 * acknowledgement until then): Slack retries what was not stored.
 *
 * Interactivity (button presses) keeps Bolt's own acknowledgement from the listener, since a
 * listener may answer with a body.
 */
export class AckFirstReceiver implements Receiver {
  private app?: App
  private server?: Server
  /** Verified events waiting for the burst to end, in the order they came. */
  private held: Held[] = []
  private heldSince = 0
  private quiet?: NodeJS.Timeout
  /** Events being routed: stop() waits for them, since Slack, having had its ack, will not send them again. */
  private readonly routing = new Set<Promise<void>>()

  private readonly signature: SlackSignature

  constructor(private readonly options: AckFirstReceiverOptions) {
    this.signature = new SlackSignature(options.signingSecret)
  }

  init(app: App): void {
    this.app = app
  }

  async start(listen: ListenOptions): Promise<Server> {
    const server = createServer((req, res) => {
      this.receive(req, res).catch((error: unknown) => {
        // Not the sender's fault (their request was read and checked): Slack retries a 500.
        this.options.logger.error(`could not take a request: ${error instanceof Error ? error.stack : String(error)}`)
        if (!res.headersSent) http.buildNoBodyResponse(res, 500)
      })
    })
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject)
      server.listen(listen, () => {
        server.off("error", reject)
        resolve()
      })
    })
    this.server = server
    return server
  }

  async stop(): Promise<void> {
    const server = this.server
    this.server = undefined
    if (server) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      server.closeIdleConnections()
      await closed
    }
    this.release()
    await Promise.allSettled(this.routing)
  }

  private async receive(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.arrived()
    const { logger, path } = this.options
    if (req.method !== "POST" || req.url?.split("?")[0] !== path) return http.buildNoBodyResponse(res, 404)
    let verified: BufferedIncomingMessage
    try {
      verified = await http.bufferIncomingMessage(req, http.defaultBodyLimit)
    } catch (error) {
      if (http.isRawBodyError(error)) return http.buildNoBodyResponse(res, error.statusCode)
      throw error
    }
    const refusal = this.signature.refusal(verified.rawBody, header(req, "x-slack-request-timestamp"), header(req, "x-slack-signature"))
    if (refusal) {
      logger.warn(`refused a request not signed by Slack: ${refusal}`)
      return http.buildNoBodyResponse(res, 401)
    }
    let body: ReceiverEvent["body"]
    try {
      body = http.parseHTTPRequestBody(verified)
    } catch (error) {
      logger.warn(`malformed request body: ${error instanceof Error ? error.message : String(error)}`)
      return http.buildNoBodyResponse(res, 400)
    }
    // JSON that is not an object (null, a number, a list) is no request of Slack's; what Slack
    // sends is an event or interaction (a type), a slash command (a command) or an ssl_check.
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      logger.warn("malformed request body: not an object")
      return http.buildNoBodyResponse(res, 400)
    }
    if (body.ssl_check) return http.buildSSLCheckResponse(res)
    if (typeof body.type !== "string" && typeof body.command !== "string") {
      logger.warn("malformed request body: neither an event, an interaction nor a command")
      return http.buildNoBodyResponse(res, 400)
    }
    if (body.type === "url_verification") return http.buildUrlVerificationResponse(res, body)
    const retry = { retryNum: http.extractRetryNumFromHTTPRequest(req), retryReason: http.extractRetryReasonFromHTTPRequest(req) }
    if (body.type === "event_callback") {
      // An event's answer carries nothing; it goes once the core has stored the event (see
      // StoreFirstReceiver), and a failure answers 500 so that Slack sends it again.
      const ack = async () => void (res.headersSent || http.buildNoBodyResponse(res, 200))
      return this.hold({ event: { body, ...retry, ack }, request: req, response: res })
    }
    const ack = new HTTPResponseAck({ logger, processBeforeResponse: false, httpRequest: verified, httpRequestBody: body, httpResponse: res })
    this.hold({ event: { body, ...retry, ack: ack.bind() }, request: req, response: res, acknowledged: () => ack.ack() })
  }

  /** A request came in: the burst goes on, unless events have been held long enough. */
  private arrived(): void {
    if (this.held.length === 0) return
    if (performance.now() - this.heldSince >= MAX_HOLD_MS) this.release()
    else this.quiet?.refresh()
  }

  private hold(held: Held): void {
    if (this.held.length === 0) {
      this.heldSince = performance.now()
      this.quiet = setTimeout(() => this.release(), QUIET_MS)
    }
    this.held.push(held)
  }

  /** Hands the held events to Bolt, which acknowledges an interaction from its listener. */
  private release(): void {
    clearTimeout(this.quiet)
    const app = this.app
    const released = this.held
    this.held = []
    if (!app) return
    for (const { event, request, response, acknowledged } of released) {
      const routed = app.processEvent(event).catch(async (error: Error) => {
        const answered = await http.defaultProcessEventErrorHandler({ error, logger: this.options.logger, request, response, storedResponse: undefined })
        if (answered) acknowledged?.()
      })
      this.routing.add(routed)
      void routed.then(() => this.routing.delete(routed))
    }
  }
}
