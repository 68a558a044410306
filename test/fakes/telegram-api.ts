import { randomBytes } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import type { BotCommand, InlineKeyboardMarkup, Message, MessageEntity, Update, UserFromGetMe } from "grammy/types"
import { waitFor } from "../support/wait-for.ts"

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
 */

type Params = Record<string, unknown>
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

export const MESSAGE_LIMIT = 4096
/** Telegram holds a long poll for at most about this long, whatever `timeout` asks for. */
const MAX_POLL_SECONDS = 50
/** Update types Telegram sends only when `allowed_updates` names them. */
const OPT_IN_UPDATES = new Set(["chat_member", "message_reaction", "message_reaction_count"])
/** Bots may download files up to 20 MB through getFile. */
const DOWNLOAD_LIMIT = 20 * 1024 * 1024
const CHAT_ACTIONS = new Set(["typing", "upload_photo", "record_video", "upload_video", "record_voice", "upload_voice", "upload_document", "choose_sticker", "find_location", "record_video_note", "upload_video_note"])

type Wake = "update" | "timeout" | "conflict" | "gone" | "closed"

class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly description: string,
    readonly retryAfter?: number,
  ) {
    super(description)
  }
}
const badRequest = (what: string) => new ApiError(400, `Bad Request: ${what}`)

// Message and update ids are shared by all fakes and helpers, so user and bot messages never collide.
let lastMessageId = 0
let lastUpdateId = 0
let lastCallbackId = 0
const now = () => Math.floor(Date.now() / 1000)

/** A new message in the private chat `chatId` from `fromId`, as its fields begin. */
function privateMessage(chatId: number, fromId: number) {
  return {
    message_id: ++lastMessageId,
    date: now(),
    chat: { id: chatId, type: "private" as const, first_name: `User ${fromId}` },
    from: { id: fromId, is_bot: false, first_name: `User ${fromId}` },
  }
}

/** A chat as Telegram describes it: a negative id is a group's, a positive one a private chat's. */
function chatWith(id: number) {
  return id < 0 ? { id, type: "group" as const, title: `Group ${id}` } : { id, type: "private" as const, first_name: `User ${id}` }
}

/** A message from `fromId` in the group `chatId` (negative), with the fields given (a reply's
 *  `reply_to_message`, say); commands carry their bot_command entity as in textUpdate. */
export function groupUpdate(chatId: number, fromId: number, text: string, extra: Partial<Message> = {}): Update {
  const update = textUpdate(chatId, fromId, text)
  return { ...update, message: { ...update.message!, chat: chatWith(chatId), ...extra } as Update["message"] & object }
}

export function textUpdate(chatId: number, fromId: number, text: string): Update {
  // grammY's bot.command() matches on the bot_command entity, as Telegram sends it.
  const command = /^\/[A-Za-z0-9_]{1,32}(?:@\w+)?/.exec(text)
  return {
    update_id: ++lastUpdateId,
    message: {
      ...privateMessage(chatId, fromId),
      text,
      ...(command && { entities: [{ type: "bot_command", offset: 0, length: command[0].length }] }),
    },
  }
}

/** A message with a file (`photo`, `document`, `voice`…) and an optional caption. */
export function fileUpdate(chatId: number, fromId: number, content: Partial<Message>, caption?: string): Update {
  return {
    update_id: ++lastUpdateId,
    message: {
      ...privateMessage(chatId, fromId),
      ...(caption !== undefined && { caption }),
      ...content,
    } as Update["message"] & object,
  }
}

/** A button press on message `messageId`; `pushUpdate` swaps in that message as the fake sent it. */
export function callbackUpdate(chatId: number, fromId: number, messageId: number, data: string): Update {
  const chat = { id: chatId, type: "private" as const, first_name: `User ${fromId}` }
  return {
    update_id: ++lastUpdateId,
    callback_query: {
      id: `cbq-${++lastCallbackId}`,
      from: { id: fromId, is_bot: false, first_name: `User ${fromId}` },
      message: { message_id: messageId, date: now(), chat },
      chat_instance: String(chatId),
      data,
    },
  }
}

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
  let queue: Update[] = []
  let allowed: Set<string> | undefined
  /** The getUpdates call waiting for an update; Telegram allows one at a time. */
  let poller: { wake(reason: Wake): void } | undefined

  const find = (params: Params) => {
    const chat = chatOf(params)
    const id = Number(params.message_id)
    return sent.findIndex((message) => message.chat.id === chat && message.message_id === id)
  }

  const deliverable = (limit: number) => {
    // Telegram never queues updates of types the bot did not ask for.
    queue = queue.filter((update) => {
      const type = Object.keys(update).find((key) => key !== "update_id") ?? ""
      return allowed ? allowed.has(type) : !OPT_IN_UPDATES.has(type)
    })
    return queue.slice(0, limit)
  }

  async function getUpdates(params: Params, res: ServerResponse): Promise<Update[]> {
    if (api.webhook) throw new ApiError(409, "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first")
    poller?.wake("conflict")
    if (params.offset !== undefined) queue = queue.filter((update) => update.update_id >= Number(params.offset))
    if (Array.isArray(params.allowed_updates)) allowed = params.allowed_updates.length > 0 ? new Set(params.allowed_updates.map(String)) : undefined
    const limit = Math.min(Math.max(Number(params.limit ?? 100) || 100, 1), 100)
    const deadline = Date.now() + Math.min(Math.max(Number(params.timeout ?? 0) || 0, 0), MAX_POLL_SECONDS) * 1000
    for (;;) {
      const updates = deliverable(limit)
      if (updates.length > 0 || Date.now() >= deadline) return updates
      const reason = await new Promise<Wake>((resolve) => {
        const self = {
          wake(why: Wake) {
            clearTimeout(timer)
            res.off("close", gone)
            if (poller === self) poller = undefined
            resolve(why)
          },
        }
        const gone = () => self.wake("gone")
        const timer = setTimeout(() => self.wake("timeout"), deadline - Date.now())
        res.on("close", gone)
        poller = self
      })
      if (reason === "conflict") throw new ApiError(409, "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running")
      if (reason === "gone" || reason === "closed") return []
    }
  }

  const methods: Record<string, (params: Params, res: ServerResponse) => unknown> = {
    getme: () => me,
    getupdates: getUpdates,
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
        message_id: ++lastMessageId,
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
      message_id: ++lastMessageId,
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
      queue.push(update)
      poller?.wake("update")
    },
    failNext(method, failure, after = 0) {
      const key = method.toLowerCase()
      failures.set(key, [...(failures.get(key) ?? []), { failure, after }])
    },
    waitFor,
    async close() {
      if (!server.listening) return
      poller?.wake("closed")
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

function reply(res: ServerResponse, status: number, body: unknown): void {
  if (res.writableEnded || res.destroyed) return
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body))
}

async function bodyOf(req: IncomingMessage): Promise<Params> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  const type = req.headers["content-type"] ?? ""
  if (type.startsWith("multipart/form-data")) return multipartOf(Buffer.concat(chunks), type)
  const raw = Buffer.concat(chunks).toString("utf8")
  if (!raw) return {}
  if (type.startsWith("application/json")) {
    try {
      return JSON.parse(raw) as Params
    } catch {
      throw badRequest("invalid JSON in request body")
    }
  }
  if (type.startsWith("application/x-www-form-urlencoded")) {
    // Form fields are strings; Telegram reads the structured ones (reply_markup, allowed_updates) as JSON.
    const entries = [...new URLSearchParams(raw)].map(([key, value]) => {
      if (!/^[[{]/.test(value)) return [key, value]
      try {
        return [key, JSON.parse(value)]
      } catch {
        return [key, value]
      }
    })
    return Object.fromEntries(entries) as Params
  }
  throw badRequest(`the fake Telegram API cannot read ${type || "bodies without a content type"}`)
}

/** A multipart body's fields: strings, and files as File (with their bytes beside them as
 *  `<field>:bytes`). Parsed by hand: undici's FormData parser refuses grammY's bodies. */
function multipartOf(body: Buffer, type: string): Params {
  const boundary = /boundary="?([^";]+)"?/.exec(type)?.[1]
  if (!boundary) throw badRequest("multipart body without a boundary")
  const params: Params = {}
  const delimiter = Buffer.from(`--${boundary}`)
  let start = body.indexOf(delimiter)
  while (start >= 0) {
    const next = body.indexOf(delimiter, start + delimiter.length)
    if (next < 0) break
    const part = body.subarray(start + delimiter.length, next)
    start = next
    const headerEnd = part.indexOf("\r\n\r\n")
    if (headerEnd < 0) continue
    const headers = part.subarray(0, headerEnd).toString("utf8")
    // The part's content ends before the CRLF that precedes the next delimiter.
    const content = part.subarray(headerEnd + 4, part.length - 2)
    const name = /name="([^"]*)"/.exec(headers)?.[1]
    if (name === undefined) continue
    // grammY leaves the filename unquoted.
    const filename = /filename="?([^"\r\n;]*)"?/.exec(headers)?.[1]
    if (filename === undefined) params[name] = content.toString("utf8")
    else {
      params[name] = new File([new Uint8Array(content)], filename)
      params[`${name}:bytes`] = content
    }
  }
  // A file attached as `attach://<name>` is the part <name>; its bytes are filed under the field that names it.
  for (const [key, value] of Object.entries(params)) {
    if (typeof value === "string" && value.startsWith("attach://")) params[`${key}:bytes`] = params[`${value.slice("attach://".length)}:bytes`]
  }
  return params
}

function chatOf(params: Params): number {
  if (params.chat_id === undefined || params.chat_id === "") throw badRequest("chat_id is empty")
  const id = Number(params.chat_id)
  if (!Number.isSafeInteger(id)) throw badRequest("chat not found")
  return id
}

function contentOf(params: Params): { text: string; entities?: MessageEntity[] } {
  const raw = params.text === undefined ? "" : String(params.text)
  const parsed = String(params.parse_mode ?? "").toLowerCase() === "html" ? parseHtml(raw) : { text: raw, entities: Array.isArray(params.entities) ? (params.entities as MessageEntity[]) : [] }
  if ("error" in parsed) throw badRequest(`can't parse entities: ${parsed.error}`)
  if (!parsed.text.trim()) throw badRequest("message text is empty")
  if (parsed.text.length > MESSAGE_LIMIT) throw badRequest("message is too long")
  return parsed.entities.length > 0 ? parsed : { text: parsed.text }
}

function markupOf(params: Params): { reply_markup?: InlineKeyboardMarkup } {
  const markup = params.reply_markup as InlineKeyboardMarkup | undefined
  if (!markup || !Array.isArray(markup.inline_keyboard)) return {}
  for (const button of markup.inline_keyboard.flat()) {
    if ("callback_data" in button) {
      const bytes = Buffer.byteLength(String(button.callback_data))
      if (bytes < 1 || bytes > 64) throw badRequest("BUTTON_DATA_INVALID")
    }
  }
  return { reply_markup: markup }
}

const ENTITY_TYPES: Record<string, MessageEntity["type"]> = {
  b: "bold",
  strong: "bold",
  i: "italic",
  em: "italic",
  u: "underline",
  ins: "underline",
  s: "strikethrough",
  strike: "strikethrough",
  del: "strikethrough",
  span: "spoiler",
  "tg-spoiler": "spoiler",
  a: "text_link",
  code: "code",
  pre: "pre",
  blockquote: "blockquote",
}

const ENTITY = /&(?:(amp|lt|gt|quot)|#(\d{1,7})|#x([\da-f]{1,6}));/
const ENTITY_AT = new RegExp(ENTITY.source, "iy")
const ENTITY_ALL = new RegExp(ENTITY.source, "gi")
const NAMED: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"' }

function decodeEntity(_match: string, name?: string, decimal?: string, hex?: string): string {
  if (name) return NAMED[name.toLowerCase()]
  return String.fromCodePoint(Math.min(decimal ? Number(decimal) : Number.parseInt(hex ?? "", 16), 0x10ffff))
}

/**
 * Telegram's parse_mode HTML: the supported tags, balanced and properly nested, and the
 * entities &lt; &gt; &amp; &quot; and numeric ones (any other `&` is a literal). Errors read
 * like Telegram's, byte offsets in UTF-8. Returns the text and its entities (UTF-16 offsets).
 */
export function parseHtml(html: string): { text: string; entities: MessageEntity[] } | { error: string } {
  const at = (index: number) => `at byte offset ${Buffer.byteLength(html.slice(0, index))}`
  const open: { name: string; offset: number; attributes: Map<string, string> }[] = []
  const entities: MessageEntity[] = []
  let text = ""
  let i = 0
  while (i < html.length) {
    const char = html[i]
    if (char === "&") {
      ENTITY_AT.lastIndex = i
      const match = ENTITY_AT.exec(html)
      text += match ? decodeEntity(match[0], match[1], match[2], match[3]) : "&"
      i += match ? match[0].length : 1
      continue
    }
    if (char !== "<") {
      text += char
      i++
      continue
    }
    const start = i
    if (html[i + 1] === "/") {
      const end = html.indexOf(">", i)
      if (end < 0) return { error: `Unclosed end tag ${at(start)}` }
      const name = html.slice(i + 2, end).trim().toLowerCase()
      const top = open.pop()
      if (!top) return { error: `Unexpected end tag ${at(start)}` }
      if (top.name !== name) return { error: `Unmatched end tag ${at(start)}, expected "</${top.name}>", found "</${name}>"` }
      i = end + 1
      const entity = entityOf(top, text.length, open.at(-1))
      if (entity) entities.push(entity)
      continue
    }
    let k = i + 1
    while (k < html.length && !/[\s>]/.test(html[k])) k++
    const name = html.slice(i + 1, k).toLowerCase()
    if (!(name in ENTITY_TYPES)) return { error: `Unsupported start tag "${name}" ${at(start)}` }
    const attributes = new Map<string, string>()
    for (;;) {
      while (k < html.length && /\s/.test(html[k])) k++
      if (k >= html.length) return { error: `Unclosed start tag ${at(start)}` }
      if (html[k] === ">") break
      const attribute = /^([^\s=>]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/.exec(html.slice(k))
      if (!attribute) return { error: `Expected equal sign in declaration of an attribute of the tag "${name}" ${at(start)}` }
      const value = attribute[2] ?? attribute[3] ?? attribute[4]
      attributes.set(attribute[1].toLowerCase(), value.replace(ENTITY_ALL, decodeEntity))
      k += attribute[0].length
    }
    if (name === "span" && attributes.get("class") !== "tg-spoiler") return { error: `Tag "span" must have class "tg-spoiler" ${at(start)}` }
    open.push({ name, offset: text.length, attributes })
    i = k + 1
  }
  const unclosed = open.pop()
  if (unclosed) return { error: `Can't find end tag corresponding to start tag "${unclosed.name}"` }
  return { text, entities: entities.sort((a, b) => a.offset - b.offset || b.length - a.length) }
}

function entityOf(
  element: { name: string; offset: number; attributes: Map<string, string> },
  end: number,
  parent: { name: string; attributes: Map<string, string> } | undefined,
): MessageEntity | undefined {
  const length = end - element.offset
  const language = /^language-(.+)$/.exec(element.attributes.get("class") ?? "")?.[1]
  // <pre><code class="language-x"> is one pre entity with a language, not a code entity inside a pre.
  if (element.name === "code" && parent?.name === "pre") {
    if (language) parent.attributes.set("language", language)
    return undefined
  }
  if (length === 0) return undefined
  const base = { offset: element.offset, length }
  const type = ENTITY_TYPES[element.name]
  if (type === "text_link") {
    const url = element.attributes.get("href")
    return url ? { ...base, type, url } : undefined
  }
  if (type === "pre") {
    const code = element.attributes.get("language")
    return code ? { ...base, type, language: code } : { ...base, type }
  }
  return { ...base, type } as MessageEntity
}
