import { createHmac } from "node:crypto"
import { request, type IncomingMessage } from "node:http"
import type { WebSocket, WebSocketServer } from "ws"
import type { BlockActionsPayload, EventCallback } from "./slack-events.ts"

/**
 * The two ways Slack delivers events and interactivity to an app: over a Socket Mode
 * connection the app opened (`socketModeServer`, run by the fake Slack API), or as signed HTTP
 * requests to the app's `/slack/events` (`EventSender`).
 */

export type SocketModeServer = {
  /** WebSocket connections opened so far, the newest last. */
  connections: WebSocket[]
  /** Envelope acknowledgements the app sent back, in order. */
  acks: { envelope_id: string; payload?: unknown }[]
  /** Sends an Events API envelope on the newest open connection; resolves with its envelope id. */
  sendEvent(body: EventCallback, retryAttempt?: number): string
  sendInteractive(payload: BlockActionsPayload): string
}

export function socketModeServer(sockets: WebSocketServer): SocketModeServer {
  const connections: WebSocket[] = []
  const acks: SocketModeServer["acks"] = []
  let lastEnvelope = 0
  sockets.on("connection", (ws) => {
    connections.push(ws)
    ws.on("message", (data) => acks.push(JSON.parse(String(data)) as SocketModeServer["acks"][number]))
    ws.send(JSON.stringify({ type: "hello", num_connections: 1, debug_info: { host: "fake" }, connection_info: { app_id: "A0APP" } }))
  })
  const send = (envelope: object) => {
    const open = connections.findLast((ws) => ws.readyState === ws.OPEN)
    if (!open) throw new Error("no open Socket Mode connection")
    const envelope_id = `env-${++lastEnvelope}`
    open.send(JSON.stringify({ envelope_id, ...envelope }))
    return envelope_id
  }
  return {
    connections,
    acks,
    sendEvent: (body, retryAttempt = 0) => send({ type: "events_api", payload: body, accepts_response_payload: false, retry_attempt: retryAttempt, retry_reason: retryAttempt ? "timeout" : "" }),
    sendInteractive: (payload) => send({ type: "interactive", payload, accepts_response_payload: false }),
  }
}

export type Delivery = { status: number; body: string; ms: number }
export type SignOptions = { retryNum?: number; timestamp?: number; signingSecret?: string }

/** Posts to an app's `/slack/events` as Slack does: v0 signature over `v0:<timestamp>:<body>`. */
export class EventSender {
  constructor(
    readonly url: string,
    private readonly signingSecret: string,
  ) {}

  event(body: EventCallback, options: SignOptions = {}): Promise<Delivery> {
    return this.post(JSON.stringify(body), "application/json", options)
  }

  /** Interactivity arrives form-encoded, the JSON in a `payload` field. */
  action(payload: BlockActionsPayload, options: SignOptions = {}): Promise<Delivery> {
    return this.post(new URLSearchParams({ payload: JSON.stringify(payload) }).toString(), "application/x-www-form-urlencoded", options)
  }

  /** A slash command arrives form-encoded, its fields at the top level. */
  command(fields: { command: string; text: string; user_id: string; channel_id: string; team_id: string; trigger_id?: string }, options: SignOptions = {}): Promise<Delivery> {
    const form = { trigger_id: `${Date.now()}.${Math.floor(Math.random() * 1e9)}`, user_name: "someone", channel_name: "directmessage", response_url: "http://127.0.0.1:9/commands", api_app_id: "A0APP", ...fields }
    return this.post(new URLSearchParams(form).toString(), "application/x-www-form-urlencoded", options)
  }

  post(body: string, contentType: string, { retryNum, timestamp = Math.floor(Date.now() / 1000), signingSecret = this.signingSecret }: SignOptions = {}): Promise<Delivery> {
    const signature = `v0=${createHmac("sha256", signingSecret).update(`v0:${timestamp}:${body}`).digest("hex")}`
    const headers: Record<string, string> = {
      "content-type": contentType,
      "content-length": String(Buffer.byteLength(body)),
      "x-slack-request-timestamp": String(timestamp),
      "x-slack-signature": signature,
      ...(retryNum !== undefined && { "x-slack-retry-num": String(retryNum), "x-slack-retry-reason": "http_timeout" }),
    }
    const started = performance.now()
    return new Promise((resolve, reject) => {
      const req = request(this.url, { method: "POST", headers }, (res) => {
        readAll(res).then((text) => resolve({ status: res.statusCode ?? 0, body: text, ms: performance.now() - started }), reject)
      })
      req.setTimeout(10_000, () => req.destroy(new Error("the app did not answer within 10 s")))
      req.on("error", reject)
      req.end(body)
    })
  }
}

/** A request's or response's whole body as text. */
export async function readAll(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString("utf8")
}
