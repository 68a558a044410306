import { randomBytes } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { WebSocketServer } from "ws"
import { waitFor } from "../support/wait-for.ts"
import { readAll, socketModeServer, type SocketModeServer } from "./slack-event-delivery.ts"
import { SlackFiles, type SlackUpload } from "./slack-files.ts"
import { ApiError, contentOf, metadataOf, nextTs, requireChannel, type SlackFile, type SlackMessage } from "./slack-messages.ts"

export { waitFor }
export { EventSender, type Delivery, type SignOptions, type SocketModeServer } from "./slack-event-delivery.ts"
export { blockActions, channelMessageEvent, dmEvent, eventCallback, fileShareEvent, mentionEvent, type BlockActionsPayload, type EventCallback, type SlackEvent } from "./slack-events.ts"
export type { SlackUpload } from "./slack-files.ts"
export { nextTs, type SlackBlock, type SlackElement, type SlackFile, type SlackMessage } from "./slack-messages.ts"

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
 *
 * Beside it: messages, their shapes and checks (slack-messages.ts), files (slack-files.ts),
 * the events a test sends (slack-events.ts) and their delivery, over Socket Mode or signed
 * HTTP (slack-event-delivery.ts).
 */

type Params = Record<string, unknown>
export type Failure = { error: string } | { status: 429; retryAfter: number } | { status: number }
/** A Web API call as received, with its arrival time (`performance.now()`). */
export type Call = { method: string; params: Params; token?: string; at: number }

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
  const files = new SlackFiles(botToken, () => `http://127.0.0.1:${port}`)
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
    "files.getUploadURLExternal": (params) => files.getUploadURLExternal(params),
    "files.completeUploadExternal": (params) => files.completeUploadExternal(params),
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

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const pathname = new URL(req.url ?? "/", "http://127.0.0.1").pathname
    if (await files.route(req, res, pathname)) return
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
    uploads: files.uploads,
    downloads: files.downloads,
    reactions,
    assistantThreads,
    threadStatus,
    suggestedPrompts,
    threadTitles,
    hostFile: (name, mimetype, data, size) => files.host(name, mimetype, data, size),
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
