import { stat } from "node:fs/promises"
import { setTimeout as sleep } from "node:timers/promises"
import { autoRetry } from "@grammyjs/auto-retry"
import { sequentialize } from "@grammyjs/runner"
import { Bot, GrammyError, HttpError, type Transformer } from "grammy"
import type { BotCommand } from "grammy/types"
import type { Logger } from "pino"
import { ConnectionHealth } from "../health/connection.ts"
import { splitPlain, UndeliverableMessage, type Channel, type ChannelHandlers, type ChannelHealth, type LiveText } from "../../src/channel/channel.ts"
import type { CommandInfo, InboundMessage, InboundOutcome, OutgoingMessage, ProgressUpdate } from "../../src/core/types.ts"
import { ConfigError, type Config } from "../../src/config/config.ts"
import { fileFetcher, sendFile, type FetchFile } from "./files.ts"
import { editChunk, inlineKeyboard, isMessageGone, isPermanentRefusal, renderSingle, sendChunk, sendTextFile } from "./messages.ts"
import { TelegramLive } from "./live.ts"
import { UpdatePoller } from "./polling.ts"
import { progressMessages } from "./progress.ts"
import { renderTelegram, TELEGRAM_LIMIT, type Chunk } from "./render.ts"
import { TypingIndicator } from "./typing.ts"
import { chatIdOf, inboundOfCallback, inboundOfMessage, telegramIdOf } from "./updates.ts"
import { listenForUpdates, type WebhookServer } from "./webhook.ts"

export interface TelegramChannelOptions {
  /** The longest `retry_after` waited out in place (default 30 s); a longer one fails the call and the outbox retries it later. */
  maxRetryDelaySeconds?: number
  typingRenewMs?: number
  progressEditIntervalMs?: number
  /** How long delegated work runs before its status message is shown (default 3 s). */
  statusAfterMs?: number
  draftIntervalMs?: number
  editIntervalMs?: number
  /** The address the webhook server binds (default: every interface). */
  webhookHost?: string
  /** How long getMe may take before the API counts as unreachable (default 10 s). */
  connectTimeoutMs?: number
  /** The first pause before the API is tried again (default 1 s, doubling up to a minute). */
  connectRetryMs?: number
}

/** auto-retry's attempts at one call that got a 429 or a 5xx; the outbox retries beyond that. */
const MAX_RETRY_ATTEMPTS = 3
const DEFAULT_MAX_RETRY_DELAY_SECONDS = 30
const UPDATE_TYPES = ["message", "callback_query"] as const
const CONNECT_TIMEOUT_MS = 10_000
const CONNECT_RETRY_MS = 1000
const MAX_CONNECT_RETRY_MS = 60_000
/** Telegram's limit for files a bot sends. */
const MAX_SEND_BYTES = 50 * 1024 * 1024
/** Telegram refuses the whole command list if one name is not like this. */
const COMMAND_NAME = /^[a-z0-9_]{1,32}$/

type TelegramConfig = Config["telegram"] & { botToken: string }

/**
 * Telegram private chats and groups (what is addressed to the bot) through grammY: long polling with @grammyjs/runner (or a webhook),
 * replies rendered to HTML and split under Telegram's limit, buttons as inline keyboards,
 * "typing…" and a status message per running task. It knows nothing about agents.
 */
export class TelegramChannel implements Channel {
  readonly name = "telegram"
  readonly messageLimit = TELEGRAM_LIMIT
  private readonly bot: Bot
  /** getUpdates allows one consumer; webhooks may land on any process. */
  get exclusive(): boolean {
    return !this.config.webhookUrl
  }
  private readonly typing: TypingIndicator
  private readonly progressMessages: ReturnType<typeof progressMessages>
  private readonly liveAnswers: TelegramLive
  private readonly fetchFile: FetchFile
  private poller?: UpdatePoller
  private webhook?: WebhookServer
  /** Messages being handed to the core, so stop() lets them land before the store closes. */
  private readonly handing = new Set<Promise<void>>()
  /** Per conversation, a reply of several chunks of which only the first ones got out. */
  private readonly partial = new Map<string, { key: string; messageIds: number[] }>()
  private readonly connection = new ConnectionHealth()
  /** Ends the retries of an unreachable API when the channel stops. */
  private readonly stopping = new AbortController()
  private connecting?: Promise<void>

  constructor(
    private readonly config: TelegramConfig,
    private readonly log: Logger,
    private readonly options: TelegramChannelOptions = {},
  ) {
    // (Config validation makes sure a webhook URL comes with its secret.)
    // grammY refuses an API root that ends in "/".
    const apiRoot = config.apiRoot?.replace(/\/+$/, "")
    this.bot = new Bot(config.botToken, { client: { apiRoot } })
    this.fetchFile = fileFetcher(this.bot.api, apiRoot ?? "https://api.telegram.org", config.botToken)
    // auto-retry would retry a network error without limit, holding up the conversation's outbox;
    // thrown at once, it is retried by the outbox with backoff (and by the runner when polling).
    const retry = autoRetry({ maxRetryAttempts: MAX_RETRY_ATTEMPTS, maxDelaySeconds: options.maxRetryDelaySeconds ?? DEFAULT_MAX_RETRY_DELAY_SECONDS, rethrowHttpErrors: true })
    this.bot.api.config.use(retry, this.logPollingFailures)
    this.typing = new TypingIndicator(this.bot.api, log, options.typingRenewMs)
    this.progressMessages = progressMessages(this.bot.api, log, { editIntervalMs: options.progressEditIntervalMs, showAfterMs: options.statusAfterMs })
    this.liveAnswers = new TelegramLive(this.bot.api, log, options)
  }

  /** The port the webhook server listens on, once started in webhook mode. */
  get webhookPort(): number | undefined {
    return this.webhook?.port
  }

  /**
   * Connects (getMe, within connectTimeoutMs) and starts receiving. An API that cannot be
   * reached does not hold start-up: it is reported at once with the URL tried, shown by
   * /healthz, and tried again in the background with backoff. A refused token is configuration
   * and ends start-up.
   */
  async start(handlers: ChannelHandlers): Promise<void> {
    this.route(handlers)
    if (await this.connect()) return this.receive(handlers)
    this.connecting = this.keepConnecting(handlers)
  }

  health(): ChannelHealth {
    return this.connection.health()
  }

  private async connect(): Promise<boolean> {
    try {
      const signal = AbortSignal.any([this.stopping.signal, AbortSignal.timeout(this.options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS)])
      // Not bot.init(): it retries network errors silently and without end. (grammY types its
      // signal with the abort-controller shim; Node's own is what it uses at run time.)
      this.bot.botInfo = await this.bot.api.getMe(signal as Parameters<Bot["api"]["getMe"]>[0])
      // Up from here; a failing getUpdates (or webhook set-up) takes it down again.
      this.connection.up()
      this.log.info({ bot: this.bot.botInfo.username }, `Telegram: connected as @${this.bot.botInfo.username}`)
      return true
    } catch (error) {
      if (error instanceof GrammyError && error.error_code === 401) {
        throw new ConfigError("TELEGRAM_BOT_TOKEN", "TELEGRAM_BOT_TOKEN was refused by Telegram (401 Unauthorized): copy the token @BotFather gave again")
      }
      const cause = error instanceof HttpError && error.error instanceof Error ? error.error : error
      this.connection.down(`could not reach the Telegram API at ${this.apiRoot}/bot<token>/getMe: ${this.redact(cause)}`)
      this.log.warn(`${this.connection.health().reason}; retrying`)
      return false
    }
  }

  private async keepConnecting(handlers: ChannelHandlers): Promise<void> {
    const first = this.options.connectRetryMs ?? CONNECT_RETRY_MS
    for (let attempt = 0; !this.stopping.signal.aborted; attempt++) {
      await sleep(Math.min(MAX_CONNECT_RETRY_MS, first * 2 ** attempt), undefined, { signal: this.stopping.signal }).catch(() => {})
      if (this.stopping.signal.aborted) return
      const connected = await this.connect().catch((error: unknown) => {
        this.connection.down(error instanceof Error ? error.message : String(error))
        this.log.error({ err: error }, "Telegram refused the connection; retrying")
        return false
      })
      if (connected) {
        this.log.info({ apiRoot: this.apiRoot }, "reached the Telegram API")
        return this.receive(handlers).catch((error: unknown) => this.log.error({ err: error }, "could not start receiving Telegram updates"))
      }
    }
  }

  /** An error's message without the bot token, which is part of every API URL (percent-encoded
   *  there when it holds a space or another character a URL path escapes). */
  private redact(error: unknown): string {
    const token = this.config.botToken
    const spellings = [token, encodeURIComponent(token), encodeURI(token)]
    return spellings.reduce((text, spelling) => text.replaceAll(spelling, "<token>"), error instanceof Error ? error.message : String(error))
  }

  private get apiRoot(): string {
    return this.config.apiRoot?.replace(/\/+$/, "") ?? "https://api.telegram.org"
  }

  async tidy(): Promise<void> {
    await this.progressMessages.tidy()
    await this.liveAnswers.tidy()
  }

  private async receive(handlers: ChannelHandlers): Promise<void> {
    await this.registerMenus(handlers)
    await this.progressMessages.restore(handlers.state, handlers.tidy !== false)
    await this.liveAnswers.restore(handlers.state, handlers.tidy !== false)
    const { webhookUrl, webhookSecret } = this.config
    if (webhookUrl && webhookSecret) {
      this.webhook = await listenForUpdates(this.bot, { port: this.config.webhookPort, host: this.options.webhookHost, secret: webhookSecret }, this.log)
      await this.bot.api.setWebhook(webhookUrl, { secret_token: webhookSecret, allowed_updates: UPDATE_TYPES }).catch(async (error: unknown) => {
        await this.stop()
        // 400 "bad webhook: …" (a host it cannot resolve, a certificate it does not trust): a restart cannot fix it.
        if (error instanceof GrammyError && error.error_code === 400) throw new ConfigError("TELEGRAM_WEBHOOK_URL", `TELEGRAM_WEBHOOK_URL was refused by Telegram (${error.description}): give the public https URL that reaches TELEGRAM_WEBHOOK_PORT`)
        throw error
      })
      this.log.info({ port: this.webhook.port }, "receiving Telegram updates by webhook")
      return
    }
    // getUpdates is refused while a webhook is set, e.g. by an earlier run in webhook mode.
    await this.bot.api.deleteWebhook()
    this.poller = new UpdatePoller(this.bot, UPDATE_TYPES, this.log)
    this.poller.start()
  }

  async send(conversation: string, message: OutgoingMessage): Promise<{ messageId: string }> {
    const chatId = chatIdOf(conversation)
    if (message.file) return { messageId: String(await this.sendFileOf(chatId, message.file, message.text)) }
    // Plain: the outbox's fallback after an error of this adapter's own code; the text goes as it is.
    const chunks: Chunk[] = message.plain ? splitPlain(message.text, TELEGRAM_LIMIT).map((text) => ({ html: text, plain: text })) : renderTelegram(message.text, undefined, this.renderFailed(conversation))
    if (chunks.length === 0) throw new UndeliverableMessage("nothing to send: the message is empty")
    const keyboard = message.buttons?.length ? inlineKeyboard(message.buttons) : undefined
    // The outbox retries a conversation's failed message before it sends the next one, so a
    // partial send of this same message is the one being retried: the chunks that got out are skipped.
    const key = JSON.stringify(message)
    const previous = this.partial.get(conversation)
    const messageIds = previous?.key === key ? previous.messageIds : []
    this.partial.set(conversation, { key, messageIds })
    if (message.live && messageIds.length === 0 && !keyboard) await this.endLive(chatId, message.live, chunks[0]!, messageIds)
    for (let i = messageIds.length; i < chunks.length; i++) {
      messageIds.push(await sendChunk(this.bot.api, chatId, chunks[i], i === chunks.length - 1 ? keyboard : undefined, message.plain))
    }
    if (message.attachment) await sendTextFile(this.bot.api, chatId, message.attachment)
    this.partial.delete(conversation)
    // A question is edited when it closes: its id is that of the part that carries the buttons.
    return { messageId: String(keyboard ? messageIds.at(-1) : messageIds[0]) }
  }

  /** The final message of an answer shown as it was written: a message that grew with it
   *  becomes the first part (a draft goes by itself). An edit that fails leaves no half answer. */
  private async endLive(chatId: number, live: string, first: Chunk, messageIds: number[]): Promise<void> {
    await this.liveAnswers.finish(live, async (grown) => {
      try {
        await editChunk(this.bot.api, chatId, grown, first)
        messageIds.push(grown)
      } catch (error) {
        this.log.warn({ err: error, chatId }, "could not end the growing message in the answer; sending the answer anew")
        await this.bot.api.deleteMessage(chatId, grown).catch(() => {})
      }
    })
  }

  /** A file that is gone or too big will not get better by retrying: refused for good. */
  private async sendFileOf(chatId: number, file: NonNullable<OutgoingMessage["file"]>, caption: string): Promise<number> {
    const size = await stat(file.path).then(
      (info) => info.size,
      (error: NodeJS.ErrnoException) => {
        throw new UndeliverableMessage(`the file to send cannot be read: ${error.code ?? error.message}`)
      },
    )
    if (size > MAX_SEND_BYTES) throw new UndeliverableMessage(`the file is ${size} bytes, over Telegram's 50 MB limit for bots`)
    return sendFile(this.bot.api, chatId, file, caption, size)
  }

  async edit(conversation: string, messageId: string, message: OutgoingMessage): Promise<void> {
    await editChunk(this.bot.api, chatIdOf(conversation), Number(messageId), renderSingle(message.text, this.renderFailed(conversation))).catch((error: unknown) => {
      if (!isMessageGone(error)) throw error
      this.log.warn({ conversation, messageId }, "the message to edit was deleted in the chat")
    })
  }

  /** Logs a message the renderer could not format, which then goes out as plain text. */
  private renderFailed(conversation: string): (error: unknown) => void {
    return (error) => this.log.error({ err: error, conversation }, "could not render the message as HTML; sending it as plain text")
  }

  /** A 400 or 403 from Telegram: see isPermanentRefusal. */
  isPermanent(error: unknown): boolean {
    return isPermanentRefusal(error)
  }

  progress(conversation: string, update: ProgressUpdate): void {
    this.progressMessages.update(chatIdOf(conversation), update)
  }

  live(conversation: string, id: string): LiveText {
    return this.liveAnswers.open(chatIdOf(conversation), id)
  }

  activity(conversation: string, busy: boolean): void {
    this.typing.set(chatIdOf(conversation), busy)
  }

  async stop(): Promise<void> {
    this.stopping.abort()
    await this.connecting
    this.typing.stop()
    this.progressMessages.stop()
    this.liveAnswers.stop()
    await this.poller?.stop()
    this.poller = undefined
    await this.webhook?.close()
    this.webhook = undefined
    await Promise.allSettled(this.handing)
  }

  private route(handlers: ChannelHandlers): void {
    this.bot.catch((error) => this.log.error({ err: error.error, update: error.ctx.update.update_id }, "could not handle a Telegram update"))
    // A chat's updates are handed over one at a time, so the core queues them in the order sent.
    this.bot.use(sequentialize((ctx) => ctx.chat?.id.toString()))
    this.bot.on("message", async (ctx) => {
      const outcome = await this.hand(handlers, inboundOfMessage(ctx.update.update_id, ctx.message, ctx.me.username, this.fetchFile))
      if (outcome?.queued) this.acknowledge(ctx.chat.id, ctx.message.message_id)
    })
    this.bot.on("callback_query", async (ctx) => {
      // The button shows a spinner until its query is answered, whatever becomes of the press.
      const answer = (text?: string) => ctx.answerCallbackQuery(text === undefined ? undefined : { text }).catch((error: unknown) => this.log.warn({ err: error }, "could not answer a button press"))
      const press = inboundOfCallback(ctx.update.update_id, ctx.callbackQuery)
      // The answer waits for the core, which has a note for a press that does nothing: another
      // person's question or task, a Stop button of work that has ended.
      let notice: string | undefined
      try {
        notice = (await this.hand(handlers, press))?.notice
      } finally {
        await answer(notice)
      }
    })
  }

  /** 👀 on a message the core queued behind a turn under way: it is taken, and answered once the
   *  answer being written is out. A courtesy: a failure is logged. */
  private acknowledge(chatId: number, messageId: number): void {
    this.bot.api.setMessageReaction(chatId, messageId, [{ type: "emoji", emoji: "👀" }]).catch((error: unknown) => this.log.warn({ err: error, chatId }, "could not mark a queued message as seen"))
  }

  /** onMessage rejects only when the core could not store the message: that is logged and
   *  rethrown, so the update is not confirmed to Telegram (a webhook answers 500; polling
   *  fetches it again) and Telegram delivers it again. */
  private async hand(handlers: ChannelHandlers, message: InboundMessage | undefined): Promise<InboundOutcome | void> {
    if (!message) return
    const handed = handlers.onMessage(message)
    const settled = handed.then(
      () => {},
      (error: unknown) => this.log.error({ err: error, conversation: message.conversation, eventId: message.eventId }, "could not take a Telegram message"),
    )
    this.handing.add(settled)
    try {
      return await handed
    } finally {
      this.handing.delete(settled)
    }
  }

  /** Everyone's menu leaves out owner-only commands; each owner's private chat gets the full one. */
  private async registerMenus({ commands, owners = [] }: ChannelHandlers): Promise<void> {
    const menu = this.menuOf(commands)
    const everyone = menu.filter((entry) => !commands.find((command) => command.name === entry.command)?.ownerOnly)
    const register = (entries: BotCommand[], chatId?: number) =>
      this.bot.api.setMyCommands(entries, chatId === undefined ? undefined : { scope: { type: "chat", chat_id: chatId } }).catch((error: unknown) => this.log.warn({ err: error, chatId }, "could not register the command menu"))
    await register(everyone)
    if (everyone.length === menu.length) return
    // In a private chat the chat id is the user's id.
    for (const owner of owners) {
      const chatId = telegramIdOf(owner)
      if (chatId !== undefined) await register(menu, chatId)
    }
  }

  private menuOf(commands: CommandInfo[]): BotCommand[] {
    const valid = commands.filter((command) => COMMAND_NAME.test(command.name))
    const skipped = commands.filter((command) => !valid.includes(command)).map((command) => command.name)
    if (skipped.length > 0) this.log.warn({ skipped }, "commands Telegram cannot list in its menu (they still work when typed)")
    return valid.map((command) => ({ command: command.name, description: command.description.slice(0, 256) || command.name }))
  }

  /** The runner retries a failing getUpdates on its own and, silenced, says nothing: this logs it. */
  private readonly logPollingFailures: Transformer = async (prev, method, payload, signal) => {
    const polling = method === "getUpdates"
    const response = await prev(method, payload, signal).catch((error: unknown) => {
      if (polling && !signal?.aborted) {
        this.connection.down(`polling ${this.apiRoot} failed: ${this.redact(error)}`)
        this.log.warn({ err: error }, "polling Telegram failed; retrying")
      }
      throw error
    })
    if (polling && !response.ok) {
      this.connection.down(`polling ${this.apiRoot} failed: ${response.error_code} ${response.description}`)
      this.log.warn({ code: response.error_code, description: response.description }, "polling Telegram failed; retrying")
    } else if (polling) this.connection.up()
    return response
  }
}
