import { randomBytes } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import type { BotCommand, Message, Update, UserFromGetMe } from "grammy/types"
import { waitFor } from "../support/wait-for.ts"
import { UpdateQueue } from "./telegram-update-queue.ts"
import { chatWith, nextMessageId, now } from "./telegram-updates.ts"
import { ApiError, badRequest, bodyOf, chatOf, contentOf, markupOf, MESSAGE_LIMIT, reply, type Params } from "./telegram-requests.ts"

export { callbackUpdate, fileUpdate, groupUpdate, textUpdate } from "./telegram-updates.ts"
export { parseHtml } from "./telegram-parse-mode.ts"
export { MESSAGE_LIMIT }

/**
 * A fake Telegram Bot API on 127.0.0.1 for end-to-end tests with the real grammY: the
 * methods Steward uses, with Telegram's limits and error shapes, so a client that works
 * here fails here the way it would fail against Telegram.
 *
 * Every chat is a private chat whose id is the user's id. A webhook is only recorded
 * (getUpdates is refused while one is set); tests post updates to the bot's webhook server
 * themselves. Files: `addFile` stores one a user "sent" (getFile gives its path, refusing files
 * over 20 MB as Telegram does, and `/file/bot<token>/<path>` serves it); sendPhoto and
 * sendDocument take multipart uploads, kept in `uploads`. Not modelled: groups, Markdown parse modes (their text is stored as
 * sent), Telegram's rule that code/pre hold no other entities, and callback queries expiring
 * with time.
 *
 * Beside it: the updates a test sends (telegram-updates.ts), getUpdates' long poll
 * (telegram-update-queue.ts), how a call is read and answered (telegram-requests.ts) and
 * parse_mode HTML (telegram-parse-mode.ts).
 */

export type CallbackAnswer = { callback_query_id: string; text?: string; show_alert?: boolean; url?: string; cache_time?: number }
/** For 429, `description` defaults to Telegram's "Too Many Requests: retry after N". */
export type Failure = { status: number; description: string; retry_after?: number } | { status: 429; retry_after: number; description?: string }

export type TelegramApi = {
  /** `http://127.0.0.1:<port>`, for `new Bot(token, { client: { apiRoot } })`. */
  apiRoot: string
  token: string
  me: UserFromGetMe
  /** The messages currently in the chats: edits replace their message, deletes remove it. */
  sent: Message[]
  callbackAnswers: CallbackAnswer[]
  /** The menu for everyone (default scope), and per chat (scope chat). */
  commands: BotCommand[]
  chatCommands: Map<number, BotCommand[]>
  /** What setWebhook set, until deleteWebhook. */
  webhook?: { url: string; secretToken?: string; allowedUpdates?: string[] }
  /** Every call as received, failed ones included, with its arrival time (`performance.now()`). */
  requests: { method: string; params: Params; at: number }[]
  /** Files the bot sent with sendPhoto or sendDocument. */
  uploads: Upload[]
  /** Every draft shown (sendMessageDraft), in order, with its arrival time (`performance.now()`). */
  drafts: Draft[]
  /** The bot's reactions (setMessageReaction) by `<chat id>:<message id>`. */
  reactions: Map<string, string[]>
  /** Downloads through the file route, by file path. */
  downloads: string[]
  /** Stores a file as if a user had sent it; `size` may claim another size (for limits). */
  addFile(data: Buffer | string, size?: number): TelegramFile
  pushUpdate(update: Update): void
  /** The next call of `method` (or, with `after`, the one after that many more succeed) fails this way instead of running; several queue up. */
  failNext(method: string, failure: Failure, after?: number): void
  /** Resolves with the predicate's first truthy value; rejects once `timeoutMs` (default 5000) has passed. */
  waitFor<T>(predicate: () => T, timeoutMs?: number): Promise<NonNullable<T>>
  close(): Promise<void>
}

/** A draft as sendMessageDraft showed it: ephemeral on Telegram, so it is not in `sent`. */
export type Draft = { chatId: number; draftId: number; text: string; parseMode?: string; at: number }

export type TelegramFile = { file_id: string; file_unique_id: string; file_size: number }
export type Upload = { method: "sendPhoto" | "sendDocument"; chatId: number; filename: string; data: Buffer; caption?: string }

/** `port`: a fixed one (a test that starts Steward first and the API later); default any free one. */
export type TelegramApiOptions = { token?: string; username?: string; port?: number }

/** Bots may download files up to 20 MB through getFile. */
const DOWNLOAD_LIMIT = 20 * 1024 * 1024
const CHAT_ACTIONS = new Set(["typing", "upload_photo", "record_video", "upload_video", "record_voice", "upload_voice", "upload_document", "choose_sticker", "find_location", "record_video_note", "upload_video_note"])

export async function startTelegramApi(options: TelegramApiOptions = {}): Promise<TelegramApi> {
  const token = options.token ?? `${100_000 + Math.floor(Math.random() * 900_000)}:AAfake${randomBytes(12).toString("hex")}`
  const me: UserFromGetMe = {
    id: Number(token.split(":")[0]),
    is_bot: true,
    first_name: "Steward",
    username: options.username ?? "steward_test_bot",
    can_join_groups: true,
    can_read_all_group_messages: false,
    supports_inline_queries: false,
    can_connect_to_business: false,
    has_main_web_app: false,
    has_topics_enabled: false,
    allows_users_to_create_topics: false,
    can_manage_bots: false,
    supports_join_request_queries: false,
  }
  const sent: Message[] = []
  const callbackAnswers: CallbackAnswer[] = []
  const commands: BotCommand[] = []
  const chatCommands = new Map<number, BotCommand[]>()
  const requests: { method: string; params: Params; at: number }[] = []
  const failures = new Map<string, { failure: Failure; after: number }[]>()
  const pendingQueries = new Set<string>()
  const files = new Map<string, { data: Buffer; size: number; path: string }>()
  const uploads: Upload[] = []
  const drafts: Draft[] = []
  const reactions = new Map<string, string[]>()
  const downloads: string[] = []
  let lastFile = 0
  const updates = new UpdateQueue()

  const find = (params: Params) => {
    const chat = chatOf(params)
    const id = Number(params.message_id)
    return sent.findIndex((message) => message.chat.id === chat && message.message_id === id)
  }


  const methods: Record<string, (params: Params, res: ServerResponse) => unknown> = {
    getme: () => me,
    getupdates(params, res) {
      if (api.webhook) throw new ApiError(409, "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first")
      return updates.getUpdates(params, res)
    },
    setwebhook(params) {
      if (!/^https:\/\//.test(String(params.url ?? ""))) throw badRequest("bad webhook: An HTTPS URL must be provided for webhook")
      const secretToken = params.secret_token === undefined ? undefined : String(params.secret_token)
      if (secretToken !== undefined && !/^[A-Za-z0-9_-]{1,256}$/.test(secretToken)) throw badRequest("bad webhook: secret token contains unallowed characters")
      api.webhook = { url: String(params.url), secretToken, allowedUpdates: Array.isArray(params.allowed_updates) ? params.allowed_updates.map(String) : undefined }
      return true
    },
    deletewebhook() {
      api.webhook = undefined
      return true
    },
    setmycommands(params) {
      const list = Array.isArray(params.commands) ? (params.commands as BotCommand[]) : []
      if (list.some((command) => !/^[a-z0-9_]{1,32}$/.test(String(command.command)))) throw badRequest("BOT_COMMAND_INVALID")
      const scope = params.scope as { type?: string; chat_id?: number } | undefined
      if (scope === undefined || scope.type === "default") commands.splice(0, commands.length, ...list)
      else if (scope.type === "chat" && typeof scope.chat_id === "number") chatCommands.set(scope.chat_id, list)
      else throw badRequest("BOT_COMMAND_SCOPE_INVALID")
      return true
    },
    sendmessage(params) {
      const chat = chatOf(params)
      const message: Message = {
        message_id: nextMessageId(),
        date: now(),
        chat: chatWith(chat),
        from: me,
        ...contentOf(params),
        ...markupOf(params),
      }
      sent.push(message)
      return message
    },
    setmessagereaction(params) {
      const chatId = chatOf(params)
      const messageId = Number(params.message_id)
      const reaction = (typeof params.reaction === "string" ? JSON.parse(params.reaction) : (params.reaction ?? [])) as Array<{ type: string; emoji?: string }>
      if (!Number.isInteger(messageId)) throw badRequest("message to react not found")
      if (reaction.some((entry) => entry.type !== "emoji" || !entry.emoji)) throw badRequest("REACTION_INVALID")
      reactions.set(`${chatId}:${messageId}`, reaction.map((entry) => entry.emoji!))
      return true
    },
    /** Bot API 9.x: a draft of a message being written, shown in a private chat only. */
    sendmessagedraft(params) {
      const chatId = chatOf(params)
      if (chatId < 0) throw badRequest("TEXTDRAFT_PEER_INVALID")
      const draftId = Number(params.draft_id)
      if (!Number.isInteger(draftId) || draftId === 0) throw badRequest("draft_id must be a non-zero integer")
      const text = String(params.text ?? "")
      if (text.length === 0) throw badRequest("message text is empty")
      if (text.length > MESSAGE_LIMIT) throw badRequest("message is too long")
      drafts.push({ chatId, draftId, text, ...(params.parse_mode !== undefined && { parseMode: String(params.parse_mode) }), at: performance.now() })
      return true
    },
    editmessagetext(params) {
      const index = find(params)
      if (index < 0) throw badRequest("message to edit not found")
      const old = sent[index]
      const content = contentOf(params)
      // Without reply_markup an edit removes the keyboard, as on Telegram.
      const markup = markupOf(params)
      const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)
      if (content.text === old.text && same(content.entities, old.entities) && same(markup.reply_markup, old.reply_markup)) {
        throw badRequest("message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message")
      }
      const { entities: _entities, reply_markup: _markup, ...rest } = old
      const edited: Message = { ...rest, ...content, ...markup, edit_date: now() }
      sent[index] = edited
      return edited
    },
    deletemessage(params) {
      const index = find(params)
      if (index < 0) throw badRequest("message to delete not found")
      sent.splice(index, 1)
      return true
    },
    sendchataction(params) {
      chatOf(params)
      if (!CHAT_ACTIONS.has(String(params.action))) throw badRequest("wrong parameter action in request")
      return true
    },
    getfile(params) {
      const file = files.get(String(params.file_id ?? ""))
      if (!file) throw badRequest("invalid file_id")
      if (file.size > DOWNLOAD_LIMIT) throw badRequest("file is too big")
      return { file_id: String(params.file_id), file_unique_id: `u${params.file_id}`, file_size: file.size, file_path: file.path }
    },
    sendphoto: (params) => sendFile("sendPhoto", params),
    senddocument: (params) => sendFile("sendDocument", params),
    answercallbackquery(params) {
      const id = String(params.callback_query_id ?? "")
      if (!pendingQueries.delete(id)) throw badRequest("query is too old and response timeout expired or query ID is invalid")
      callbackAnswers.push({ ...(params as Partial<CallbackAnswer>), callback_query_id: id })
      return true
    },
  }

  /** sendPhoto / sendDocument: the file is a multipart part (`attach://<name>` in the field, as grammY sends it). */
  function sendFile(method: Upload["method"], params: Params): Message {
    const chat = chatOf(params)
    const field = method === "sendPhoto" ? "photo" : "document"
    const value = params[field]
    const attached = typeof value === "string" && value.startsWith("attach://") ? params[value.slice("attach://".length)] : value
    if (!(attached instanceof File)) throw badRequest(`there is no ${field} in the request`)
    const data = params[`${field}:bytes`] as Buffer
    if (data.byteLength === 0) throw badRequest("file must be non-empty")
    if (data.byteLength > (method === "sendPhoto" ? 10 : 50) * 1024 * 1024) throw new ApiError(413, "Request Entity Too Large")
    const caption = params.caption === undefined ? undefined : String(params.caption)
    uploads.push({ method, chatId: chat, filename: attached.name, data, caption })
    const stored = api.addFile(data)
    const message: Message = {
      message_id: nextMessageId(),
      date: now(),
      chat: chatWith(chat),
      from: me,
      ...(caption !== undefined && { caption }),
      ...(method === "sendPhoto" ? { photo: [{ ...stored, width: 1, height: 1 }] } : { document: { ...stored, file_name: attached.name } }),
    } as Message
    sent.push(message)
    return message
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://127.0.0.1")
    const download = /^\/file\/bot([^/]+)\/(.+)$/.exec(url.pathname)
    if (download) {
      if (download[1] !== token) throw new ApiError(401, "Unauthorized")
      const file = [...files.values()].find((entry) => entry.path === download[2])
      if (!file) throw new ApiError(404, "Not Found")
      downloads.push(file.path)
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": file.data.byteLength }).end(file.data)
      return
    }
    const route = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url.pathname)
    if (!route) throw new ApiError(404, "Not Found")
    if (route[1] !== token) throw new ApiError(401, "Unauthorized")
    const method = route[2]
    const at = performance.now()
    const params = { ...Object.fromEntries(url.searchParams), ...(await bodyOf(req)) }
    requests.push({ method, params, at })
    // A planned failure lets its `after` calls through first.
    const planned = failures.get(method.toLowerCase())
    const failure = planned?.[0] && planned[0].after-- === 0 ? planned.shift()?.failure : undefined
    if (failure) {
      const description = failure.description ?? `Too Many Requests: retry after ${failure.retry_after}`
      throw new ApiError(failure.status, description, failure.retry_after)
    }
    const run = methods[method.toLowerCase()]
    if (!run) throw new ApiError(404, "Not Found")
    reply(res, 200, { ok: true, result: await run(params, res) })
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (error instanceof ApiError) {
        const parameters = error.retryAfter === undefined ? {} : { parameters: { retry_after: error.retryAfter } }
        reply(res, error.status, { ok: false, error_code: error.status, description: error.description, ...parameters })
      } else {
        // A bug in the fake should fail the test loudly, not look like a Telegram error.
        reply(res, 500, { ok: false, error_code: 500, description: `Internal Server Error: fake crashed: ${error instanceof Error ? error.stack : error}` })
      }
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port ?? 0, "127.0.0.1", resolve)
  })
  const { port } = server.address() as AddressInfo

  const api: TelegramApi = {
    apiRoot: `http://127.0.0.1:${port}`,
    token,
    me,
    sent,
    callbackAnswers,
    commands,
    chatCommands,
    requests,
    uploads,
    drafts,
    reactions,
    downloads,
    addFile(data, size) {
      const id = `file${++lastFile}`
      const bytes = Buffer.from(data)
      files.set(id, { data: bytes, size: size ?? bytes.byteLength, path: `documents/file_${lastFile}` })
      return { file_id: id, file_unique_id: `u${id}`, file_size: size ?? bytes.byteLength }
    },
    pushUpdate(update) {
      const query = update.callback_query
      if (query) {
        pendingQueries.add(query.id)
        const shown = sent.find((message) => message.chat.id === query.message?.chat.id && message.message_id === query.message?.message_id)
        if (shown) update = { ...update, callback_query: { ...query, message: shown } }
      }
      updates.push(update)
    },
    failNext(method, failure, after = 0) {
      const key = method.toLowerCase()
      failures.set(key, [...(failures.get(key) ?? []), { failure, after }])
    },
    waitFor,
    async close() {
      if (!server.listening) return
      updates.close()
      // Let the woken poll write its empty answer before the connections go.
      await new Promise((resolve) => setImmediate(resolve))
      await new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
    },
  }
  return api
}
