import { createHmac, randomBytes } from "node:crypto"
import { createServer, request, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { WebSocketServer, type WebSocket } from "ws"
import { waitFor } from "../support/wait-for.ts"

export { waitFor }

/**
 * A fake Slack Web API on 127.0.0.1 for tests with the real @slack/bolt: the methods Steward
 * uses, with Slack's request formats (form-encoded with `blocks` as a JSON string, or JSON),
 * bearer tokens, `{ok: false, error}` answers, block limits and 429 with Retry-After on
 * demand. `apps.connections.open` hands out a ws:// URL of a Socket Mode server it runs too.
 *
 * Beside it, `EventSender` posts signed Events API and interactivity requests to an app, the
 * way Slack does. Not modelled: users, rate limits on their own, the Events API's retries on
 * their own (a test sends the retry itself).
 *
 * Busy indicators: `reactions.add`/`reactions.remove` keep `reactions` (the names on a message,
 * by `<channel>:<ts>`; already_reacted, no_reaction as Slack answers); `assistant.threads.setStatus`
 * keeps `threadStatus` (by `<channel_id>:<thread_ts>`, an empty status clears it) for the threads
 * listed in `assistantThreads`, and answers any other thread with `not_allowed`.
 *
 * Files: `hostFile` serves a file at a private download URL that needs the bot token (without
 * it, Slack's sign-in page, HTTP 200, as Slack answers); files.uploadV2's three steps
 * (files.getUploadURLExternal, the upload to the URL it returned, files.completeUploadExternal)
 * leave the file in `uploads`.
 */

type Params = Record<string, unknown>
export type SlackBlock = { type: string; block_id?: string; text?: { type: string; text: string }; elements?: SlackElement[] }
export type SlackElement = { type: string; action_id?: string; value?: string; text?: { type: string; text: string } }
export type SlackMessage = { channel: string; ts: string; text: string; blocks?: SlackBlock[]; thread_ts?: string; user: string; bot_id: string; metadata?: { event_type: string; event_payload: Record<string, unknown> }; streaming?: boolean }
export type Failure = { error: string } | { status: 429; retryAfter: number } | { status: number }
/** A Web API call as received, with its arrival time (`performance.now()`). */
export type Call = { method: string; params: Params; token?: string; at: number }
/** A file as a message event carries it. */
export type SlackFile = { id: string; name: string; mimetype: string; size: number; url_private_download: string; url_private: string; mode: string }
/** A file the bot uploaded, once completed into a channel. */
export type SlackUpload = { id: string; filename: string; data: Buffer; channel?: string; thread_ts?: string; initial_comment?: string; title?: string }

export type SlackApi = {
  /** `http://127.0.0.1:<port>/api/`, for `clientOptions.slackApiUrl` (SLACK_API_URL). */
  apiUrl: string
  botToken: string
  appToken: string
  signingSecret: string
  team: string
  botUserId: string
  botId: string
  /** The messages currently in the channels: updates replace their message, deletes remove it. */
  messages: SlackMessage[]
  /** Every Web API call as received, failed ones included. */
  calls: Call[]
  /** users.info's `tz` per Slack user id; a user not listed has none (as for a user Slack gives no zone). */
  userZones: Map<string, string>
  /** chat.postEphemeral notes: shown to `user` alone. */
  ephemerals: Array<{ channel: string; user: string; text: string; thread_ts?: string }>
  socket: SocketModeServer
  /** Files the bot uploaded and completed into a conversation. */
  uploads: SlackUpload[]
  /** Downloads of hosted files, with the token they came with. */
  downloads: { id: string; token?: string }[]
  /** The reactions on messages now, by `<channel>:<ts>`. */
  reactions: Map<string, Set<string>>
  /** Assistant threads (`<channel>:<thread_ts>`) where the app may set a status. */
  assistantThreads: Set<string>
  /** The status shown in each assistant thread now, by `<channel>:<thread_ts>`. */
  threadStatus: Map<string, string>
  /** Suggested prompts and titles set on assistant threads, by `<channel>:<thread_ts>`. */
  suggestedPrompts: Map<string, Array<{ title: string; message: string }>>
  threadTitles: Map<string, string>
  /** Serves `data` as a file a user shared; `size` may claim another size (for limits). */
  hostFile(name: string, mimetype: string, data: Buffer | string, size?: number): SlackFile
  /** The next call of `method` (for which `when` holds, if given) fails this way instead of running; several queue up. */
  failNext(method: string, failure: Failure, when?: (params: Params) => boolean): void
  /** Resolves with the predicate's first truthy value; rejects once `timeoutMs` (default 5000) has passed. */
  waitFor<T>(predicate: () => T, timeoutMs?: number): Promise<NonNullable<T>>
  close(): Promise<void>
}

export type SocketModeServer = {
  /** WebSocket connections opened so far, the newest last. */
  connections: WebSocket[]
  /** Envelope acknowledgements the app sent back, in order. */
  acks: { envelope_id: string; payload?: unknown }[]
  /** Sends an Events API envelope on the newest open connection; resolves with its envelope id. */
  sendEvent(body: EventCallback, retryAttempt?: number): string
  sendInteractive(payload: BlockActionsPayload): string
}

const MESSAGE_LIMIT = 40_000
const SECTION_TEXT_LIMIT = 3000
const BUTTON_TEXT_LIMIT = 75
const ACTIONS_LIMIT = 25

class ApiError extends Error {
  constructor(readonly error: string) {
    super(error)
  }
}

// Timestamps are shared by all fakes and helpers, so user and bot messages never collide and sort in order.
let lastTs = 0
export function nextTs(): string {
  lastTs++
  return `${1_700_000_000 + Math.floor(lastTs / 1_000_000)}.${String(lastTs % 1_000_000).padStart(6, "0")}`
}
let lastEvent = 0

export async function startSlackApi(options: { team?: string } = {}): Promise<SlackApi> {
  const team = options.team ?? "T0TEAM"
  const botUserId = "U0BOT"
  const botId = "B0BOT"
  const botToken = `xoxb-${randomBytes(8).toString("hex")}`
  const appToken = `xapp-1-${randomBytes(8).toString("hex")}`
  const messages: SlackMessage[] = []
  const calls: Call[] = []
  const userZones = new Map<string, string>()
  const ephemerals: SlackApi["ephemerals"] = []
  /** Messages of a channel (or of one thread), newest first as Slack returns history; metadata
   *  only when asked. `oldest` is not modelled: the fake's timestamps are not clock times. */
  const listed = (params: Params, inThread?: string) => {
    const withMetadata = params.include_all_metadata === true || params.include_all_metadata === "true"
    return messages
      .filter((m) => m.channel === params.channel && (inThread ? m.thread_ts === inThread || m.ts === inThread : !m.thread_ts))
      .map((m) => (withMetadata ? m : { ...m, metadata: undefined }))
      .reverse()
  }
  const failures = new Map<string, { failure: Failure; when: (params: Params) => boolean }[]>()
  const hosted = new Map<string, { name: string; mimetype: string; data: Buffer }>()
  const pendingUploads = new Map<string, { filename: string; length: number; data?: Buffer }>()
  const uploads: SlackUpload[] = []
  const downloads: { id: string; token?: string }[] = []
  let lastFile = 0
  const reactions = new Map<string, Set<string>>()
  const assistantThreads = new Set<string>()
  const threadStatus = new Map<string, string>()
  const suggestedPrompts = new Map<string, Array<{ title: string; message: string }>>()
  const threadTitles = new Map<string, string>()

  const find = (params: Params) => {
    const index = messages.findIndex((message) => message.channel === params.channel && message.ts === params.ts)
    if (index < 0) throw new ApiError("message_not_found")
    return index
  }

  const methods: Record<string, (params: Params, token: string) => unknown> = {
    "auth.test": (_params, token) => {
      if (!token.startsWith("xoxb-")) throw new ApiError("not_allowed_token_type")
      return { url: "https://steward-test.slack.com/", team: "Steward Test", user: "steward", team_id: team, user_id: botUserId, bot_id: botId, is_enterprise_install: false }
    },
    // A user's DM with the app is D + their id without its U: what Steward needs is a stable id.
    "conversations.open": (params) => ({ channel: { id: `D${String(params.users).replace(/^[UW]/, "")}` } }),
    "chat.postMessage": (params) => {
      const channel = requireChannel(params)
      const content = contentOf(params)
      if (!content.text && !content.blocks) throw new ApiError("no_text")
      const metadata = metadataOf(params)
      const message: SlackMessage = { channel, ts: nextTs(), user: botUserId, bot_id: botId, text: content.text ?? "", ...(content.blocks && { blocks: content.blocks }), ...(metadata && { metadata }) }
      if (params.thread_ts !== undefined) {
        if (!messages.some((m) => m.channel === channel && m.ts === params.thread_ts) && !String(params.thread_ts).match(/^\d+\.\d+$/)) throw new ApiError("invalid_thread_ts")
        message.thread_ts = String(params.thread_ts)
      }
      messages.push(message)
      return { channel, ts: message.ts, message }
    },
    // Text streaming (chat.startStream / appendStream / stopStream): a message in a thread that
    // grows by markdown_text appends until it is stopped; outside a DM it needs its recipient.
    "chat.startStream": (params) => {
      const channel = requireChannel(params)
      if (params.thread_ts === undefined) throw new ApiError("invalid_arguments")
      if (!channel.startsWith("D") && (!params.recipient_user_id || !params.recipient_team_id)) throw new ApiError("missing_recipient_user_id")
      const message: SlackMessage = { channel, ts: nextTs(), user: botUserId, bot_id: botId, text: String(params.markdown_text ?? ""), thread_ts: String(params.thread_ts), streaming: true }
      messages.push(message)
      return { channel, ts: message.ts }
    },
    "chat.appendStream": (params) => {
      requireChannel(params)
      const message = messages[find(params)]
      if (!message.streaming) throw new ApiError("message_not_in_streaming_state")
      if (!params.markdown_text) throw new ApiError("invalid_arguments")
      message.text += String(params.markdown_text)
      return { channel: message.channel, ts: message.ts }
    },
    "chat.stopStream": (params) => {
      requireChannel(params)
      const index = find(params)
      const message = messages[index]
      if (!message.streaming) throw new ApiError("message_not_in_streaming_state")
      messages[index] = { ...message, text: message.text + String(params.markdown_text ?? ""), streaming: false }
      return { channel: message.channel, ts: message.ts, message: messages[index] }
    },
    "chat.update": (params) => {
      requireChannel(params)
      const index = find(params)
      if (messages[index].streaming) throw new ApiError("cant_update_message")
      const content = contentOf(params)
      // As on Slack: without `blocks` the message keeps its blocks; an empty list removes them.
      const updated: SlackMessage = { ...messages[index], text: content.text ?? messages[index].text }
      if (content.blocks !== undefined) updated.blocks = content.blocks.length > 0 ? content.blocks : undefined
      // As on Slack: an update may set the message's metadata.
      const metadata = metadataOf(params)
      if (metadata) updated.metadata = metadata
      messages[index] = updated
      return { channel: updated.channel, ts: updated.ts, text: updated.text }
    },
    "users.info": (params) => {
      const user = String(params.user ?? "")
      if (!/^U\w+$/.test(user)) throw new ApiError("user_not_found")
      const tz = userZones.get(user)
      return { user: { id: user, team_id: team, name: user.toLowerCase(), ...(tz && { tz }) } }
    },
    "chat.postEphemeral": (params) => {
      const channel = requireChannel(params)
      if (!params.user) throw new ApiError("user_not_in_channel")
      ephemerals.push({ channel, user: String(params.user), text: String(params.text ?? ""), ...(params.thread_ts !== undefined && { thread_ts: String(params.thread_ts) }) })
      return { message_ts: nextTs() }
    },
    "conversations.history": (params) => ({ messages: listed({ ...params, channel: requireChannel(params) }), has_more: false }),
    "conversations.replies": (params) => ({ messages: listed({ ...params, channel: requireChannel(params) }, String(params.ts)).reverse(), has_more: false }),
    "chat.delete": (params) => {
      requireChannel(params)
      messages.splice(find(params), 1)
      return { channel: params.channel, ts: params.ts }
    },
    "files.getUploadURLExternal": (params) => {
      const length = Number(params.length)
      if (!params.filename) throw new ApiError("invalid_arguments")
      if (!Number.isSafeInteger(length) || length < 1) throw new ApiError("invalid_arguments")
      const id = `F0UP${++lastFile}`
      pendingUploads.set(id, { filename: String(params.filename), length })
      return { upload_url: `http://127.0.0.1:${port}/upload/v1/${id}`, file_id: id }
    },
    "files.completeUploadExternal": (params) => {
      const files = (typeof params.files === "string" ? JSON.parse(params.files) : params.files) as { id: string; title?: string }[]
      const done = files.map((file) => {
        const pending = pendingUploads.get(file.id)
        if (!pending?.data) throw new ApiError("file_not_found")
        pendingUploads.delete(file.id)
        const channel = params.channel_id === undefined ? undefined : String(params.channel_id)
        const upload: SlackUpload = { id: file.id, filename: pending.filename, data: pending.data, channel, title: file.title, ...(params.thread_ts !== undefined && { thread_ts: String(params.thread_ts) }), ...(params.initial_comment !== undefined && { initial_comment: String(params.initial_comment) }) }
        uploads.push(upload)
        return { id: file.id, name: pending.filename, title: file.title ?? pending.filename }
      })
      return { files: done }
    },
    "reactions.add": (params) => {
      const key = `${requireChannel(params)}:${String(params.timestamp)}`
      const names = reactions.get(key) ?? new Set<string>()
      if (!params.name) throw new ApiError("invalid_name")
      if (names.has(String(params.name))) throw new ApiError("already_reacted")
      reactions.set(key, names.add(String(params.name)))
      return {}
    },
    "reactions.remove": (params) => {
      const names = reactions.get(`${requireChannel(params)}:${String(params.timestamp)}`)
      if (!names?.delete(String(params.name))) throw new ApiError("no_reaction")
      return {}
    },
    "assistant.threads.setStatus": (params) => {
      const key = `${String(params.channel_id)}:${String(params.thread_ts)}`
      if (params.status === undefined) throw new ApiError("invalid_arguments")
      if (!assistantThreads.has(key)) throw new ApiError("not_allowed")
      if (params.status === "") threadStatus.delete(key)
      else threadStatus.set(key, String(params.status))
      return {}
    },
    // The assistant container: a thread's suggested prompts (1-4, each a title and a message) and title.
    "assistant.threads.setSuggestedPrompts": (params) => {
      const prompts = (typeof params.prompts === "string" ? JSON.parse(params.prompts) : params.prompts) as Array<{ title?: string; message?: string }> | undefined
      if (!params.channel_id || !params.thread_ts || !Array.isArray(prompts) || prompts.length < 1 || prompts.length > 4 || prompts.some((prompt) => !prompt.title || !prompt.message)) throw new ApiError("invalid_arguments")
      suggestedPrompts.set(`${String(params.channel_id)}:${String(params.thread_ts)}`, prompts.map((prompt) => ({ title: prompt.title!, message: prompt.message! })))
      return {}
    },
    "assistant.threads.setTitle": (params) => {
      if (!params.channel_id || !params.thread_ts || !params.title) throw new ApiError("invalid_arguments")
      threadTitles.set(`${String(params.channel_id)}:${String(params.thread_ts)}`, String(params.title))
      return {}
    },
    "apps.connections.open": (_params, token) => {
      if (!token.startsWith("xapp-")) throw new ApiError("not_allowed_token_type")
      return { url: `ws://127.0.0.1:${port}/link/?ticket=${randomBytes(6).toString("hex")}` }
    },
  }

  /** The file routes: private downloads need the bot token; an upload URL takes the bytes once. */
  async function fileRoute(req: IncomingMessage, res: ServerResponse, pathname: string): Promise<boolean> {
    const download = /^\/files-pri\/([^/]+)\/[^/]+$/.exec(pathname)
    if (download) {
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1]
      downloads.push({ id: download[1], token })
      const file = hosted.get(download[1])
      if (!file) res.writeHead(404).end()
      else if (token !== botToken) res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end("<html><body>Sign in to Slack</body></html>")
      else res.writeHead(200, { "content-type": file.mimetype, "content-length": file.data.byteLength }).end(file.data)
      return true
    }
    const upload = /^\/upload\/v1\/([^/]+)$/.exec(pathname)
    if (upload && req.method === "POST") {
      const pending = pendingUploads.get(upload[1])
      const chunks: Buffer[] = []
      for await (const chunk of req) chunks.push(chunk as Buffer)
      // Slack takes the bytes raw or as a multipart form's file (the Web API client sends the latter).
      const type = req.headers["content-type"] ?? ""
      const form = type.startsWith("multipart/form-data") ? await new Request("http://127.0.0.1/", { method: "POST", headers: { "content-type": type }, body: new Uint8Array(Buffer.concat(chunks)) }).formData() : undefined
      const part = form && [...form.values()].find((value) => typeof value !== "string")
      const data = part ? Buffer.from(await part.arrayBuffer()) : Buffer.concat(chunks)
      if (!pending || data.byteLength !== pending.length) res.writeHead(400).end("bad upload")
      else {
        pending.data = data
        res.writeHead(200, { "content-type": "text/plain" }).end(`OK - ${data.byteLength}`)
      }
      return true
    }
    return false
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const pathname = new URL(req.url ?? "/", "http://127.0.0.1").pathname
    if (await fileRoute(req, res, pathname)) return
    const route = /^\/api\/([\w.]+)$/.exec(pathname)
    if (!route) return reply(res, 404, { ok: false, error: "unknown_method" })
    const method = route[1]
    const at = performance.now()
    let params: Params
    try {
      params = await bodyOf(req)
    } catch (error) {
      // Slack answers a body it cannot parse with HTTP 200 and invalid_json.
      if (error instanceof SyntaxError) return reply(res, 200, { ok: false, error: "invalid_json" })
      throw error
    }
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1] ?? (typeof params.token === "string" ? params.token : undefined)
    calls.push({ method, params, token, at })
    const queued = failures.get(method) ?? []
    const index = queued.findIndex((entry) => entry.when(params))
    const failure = index < 0 ? undefined : queued.splice(index, 1)[0].failure
    if (failure) {
      if ("error" in failure) return reply(res, 200, { ok: false, error: failure.error })
      if ("retryAfter" in failure) return reply(res, 429, { ok: false, error: "ratelimited" }, { "retry-after": String(failure.retryAfter) })
      return reply(res, failure.status, { ok: false, error: "fatal_error" })
    }
    const run = methods[method]
    if (!run) return reply(res, 200, { ok: false, error: "unknown_method" })
    if (!token) return reply(res, 200, { ok: false, error: "not_authed" })
    if (token !== botToken && token !== appToken) return reply(res, 200, { ok: false, error: "invalid_auth" })
    try {
      reply(res, 200, { ok: true, ...(run(params, token) as object) })
    } catch (error) {
      if (!(error instanceof ApiError)) throw error
      reply(res, 200, { ok: false, error: error.error })
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      // A bug in the fake should fail the test loudly, not look like a Slack error.
      reply(res, 500, { ok: false, error: `fake crashed: ${error instanceof Error ? error.stack : error}` })
    })
  })
  const sockets = new WebSocketServer({ server, path: "/link/" })
  const socket = socketModeServer(sockets)
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", resolve)
  })
  const { port } = server.address() as AddressInfo

  return {
    apiUrl: `http://127.0.0.1:${port}/api/`,
    botToken,
    appToken,
    signingSecret: randomBytes(16).toString("hex"),
    team,
    botUserId,
    botId,
    messages,
    calls,
    userZones,
    ephemerals,
    socket,
    uploads,
    downloads,
    reactions,
    assistantThreads,
    threadStatus,
    suggestedPrompts,
    threadTitles,
    hostFile(name, mimetype, data, size) {
      const id = `F0IN${++lastFile}`
      const bytes = Buffer.from(data)
      hosted.set(id, { name, mimetype, data: bytes })
      const url = `http://127.0.0.1:${port}/files-pri/${id}/${encodeURIComponent(name)}`
      return { id, name, mimetype, size: size ?? bytes.byteLength, url_private: url, url_private_download: url, mode: "hosted" }
    },
    failNext(method, failure, when = () => true) {
      failures.set(method, [...(failures.get(method) ?? []), { failure, when }])
    },
    waitFor,
    async close() {
      for (const client of sockets.clients) client.terminate()
      await new Promise<void>((resolve) => sockets.close(() => resolve()))
      await new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
    },
  }
}

function socketModeServer(sockets: WebSocketServer): SocketModeServer {
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

function requireChannel(params: Params): string {
  if (typeof params.channel !== "string" || !params.channel) throw new ApiError("channel_not_found")
  return params.channel
}

/** The text and blocks of a post or update, checked against Slack's limits. */
function contentOf(params: Params): { text?: string; blocks?: SlackBlock[] } {
  const text = params.text === undefined ? undefined : String(params.text)
  if (text !== undefined && text.length > MESSAGE_LIMIT) throw new ApiError("msg_too_long")
  if (params.blocks === undefined) return { text }
  let blocks: unknown = params.blocks
  if (typeof blocks === "string") {
    try {
      blocks = JSON.parse(blocks)
    } catch {
      // As on Slack: a `blocks` field that is not JSON is the caller's mistake, answered with HTTP 200.
      throw new ApiError("invalid_blocks_format")
    }
  }
  if (!Array.isArray(blocks)) throw new ApiError("invalid_blocks_format")
  if (!blocks.every((block) => typeof block === "object" && block !== null && typeof (block as SlackBlock).type === "string")) throw new ApiError("invalid_blocks")
  const actionIds = new Set<string>()
  for (const block of blocks as SlackBlock[]) {
    if (block.type === "section" && (!block.text?.text || block.text.text.length > SECTION_TEXT_LIMIT)) throw new ApiError("invalid_blocks")
    if (block.type !== "actions") continue
    if (!Array.isArray(block.elements) || block.elements.length === 0 || block.elements.length > ACTIONS_LIMIT) throw new ApiError("invalid_blocks")
    for (const element of block.elements) {
      const label = element?.text?.text ?? ""
      if (!element || element.type !== "button" || element.text?.type !== "plain_text" || !label || label.length > BUTTON_TEXT_LIMIT) throw new ApiError("invalid_blocks")
      if (!element.action_id || actionIds.has(element.action_id)) throw new ApiError("invalid_blocks")
      actionIds.add(element.action_id)
    }
  }
  return { text, blocks: blocks as SlackBlock[] }
}

function reply(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.writableEnded || res.destroyed) return
  res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body))
}

async function bodyOf(req: IncomingMessage): Promise<Params> {
  const raw = await readAll(req)
  if (!raw) return {}
  const type = req.headers["content-type"] ?? ""
  if (type.startsWith("application/json")) return JSON.parse(raw) as Params
  if (type.startsWith("application/x-www-form-urlencoded")) return Object.fromEntries(new URLSearchParams(raw))
  throw new Error(`the fake Slack API cannot read ${type || "bodies without a content type"}`)
}

async function readAll(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString("utf8")
}

// ── events, as Slack sends them ───────────────────────────────────────────────────────

export type SlackEvent = { type: string; user?: string; text?: string; ts: string; channel: string; channel_type?: string; thread_ts?: string; subtype?: string; bot_id?: string; event_ts?: string; files?: SlackFile[] }
export type EventCallback = { token: string; team_id: string; api_app_id: string; event: SlackEvent; type: "event_callback"; event_id: string; event_time: number; authorizations: object[] }

export function eventCallback(team: string, event: SlackEvent, eventId = `Ev${String(++lastEvent).padStart(8, "0")}`): EventCallback {
  return {
    token: "legacy-verification-token",
    team_id: team,
    api_app_id: "A0APP",
    event: { event_ts: event.ts, ...event },
    type: "event_callback",
    event_id: eventId,
    event_time: Math.floor(Date.now() / 1000),
    authorizations: [{ team_id: team, user_id: "U0BOT", is_bot: true, is_enterprise_install: false }],
  }
}

/** A user's direct message to the bot (in a thread of the DM when `thread_ts` is given). */
export function dmEvent(user: string, channel: string, text: string, extra: Partial<SlackEvent> = {}): SlackEvent {
  return { type: "message", user, text, ts: nextTs(), channel, channel_type: "im", ...extra }
}

/** Files shared in a DM, with `text` as the message (Slack's file_share subtype). */
export function fileShareEvent(user: string, channel: string, text: string, files: SlackFile[]): SlackEvent {
  return dmEvent(user, channel, text, { subtype: "file_share", files })
}

/** `@steward …` in a channel: Slack sends the mention with the bot's user id in angle brackets. */
export function mentionEvent(user: string, channel: string, text: string, extra: Partial<SlackEvent> = {}): SlackEvent {
  return { type: "app_mention", user, text: `<@U0BOT> ${text}`, ts: nextTs(), channel, ...extra }
}

export function channelMessageEvent(user: string, channel: string, text: string, extra: Partial<SlackEvent> = {}): SlackEvent {
  return { type: "message", user, text, ts: nextTs(), channel, channel_type: "channel", ...extra }
}

export type BlockActionsPayload = ReturnType<typeof blockActions>

/** A press of the button `label` on `message`, as the interactivity payload Slack posts. */
export function blockActions(team: string, user: string, message: SlackMessage, label: string) {
  const element = message.blocks?.flatMap((block) => (block.type === "actions" ? (block.elements ?? []) : [])).find((e) => e.text?.text === label)
  if (!element) throw new Error(`no button "${label}" on message ${message.ts}`)
  const actionTs = nextTs()
  return {
    type: "block_actions" as const,
    team: { id: team, domain: "steward-test" },
    user: { id: user, username: user.toLowerCase(), team_id: team },
    api_app_id: "A0APP",
    token: "legacy-verification-token",
    container: { type: "message", message_ts: message.ts, channel_id: message.channel, is_ephemeral: false, ...(message.thread_ts && { thread_ts: message.thread_ts }) },
    trigger_id: `${Date.now()}.${randomBytes(4).readUInt32BE()}.${randomBytes(8).toString("hex")}`,
    channel: { id: message.channel, name: "directmessage" },
    message: { type: "message", user: message.user, bot_id: message.bot_id, ts: message.ts, text: message.text, blocks: message.blocks, ...(message.thread_ts && { thread_ts: message.thread_ts }) },
    response_url: "http://127.0.0.1:9/response-url-not-used",
    actions: [{ type: "button", action_id: element.action_id!, block_id: "steward", text: element.text!, value: element.value!, action_ts: actionTs }],
  }
}

// ── signed requests to the app ────────────────────────────────────────────────────────

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

/** A post's or update's `metadata` parameter (an object, or JSON as form-encoded calls send it). */
function metadataOf(params: Record<string, unknown>): SlackMessage["metadata"] | undefined {
  const metadata = params.metadata as SlackMessage["metadata"] | string | undefined
  return typeof metadata === "string" ? (JSON.parse(metadata) as SlackMessage["metadata"]) : metadata
}
