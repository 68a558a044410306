import type { AddressInfo } from "node:net"
import { setTimeout as sleep } from "node:timers/promises"
import { App, SocketModeReceiver, webApi, type BlockAction, type ButtonAction, type Logger as BoltLogger } from "@slack/bolt"
import type { Logger } from "pino"
import { ConnectionHealth } from "../health/connection.ts"
import { splitPlain, UndeliverableMessage, type Channel, type ChannelHandlers, type ChannelHealth, type LiveText } from "../../src/channel/channel.ts"
import type { InboundMessage, InboundOutcome, OutgoingMessage, ProgressUpdate } from "../../src/core/types.ts"
import type { Config } from "../../src/config/config.ts"
import { portError } from "../../src/config/ports.ts"
import { section, withButtons, type Block } from "./blocks.ts"
import { BusyIndicator, type MessageRef } from "./busy.ts"
import { messageIdOf, messageRefOf, placeOf, type Place } from "./conversation.ts"
import { AssistantThreads, type AssistantThreadEvent } from "./assistant.ts"
import { tokenOrigins, uploadFile } from "./files.ts"
import { SlackLive } from "./live.ts"
import { ACTION_ID, inboundOfAction, inboundOfEvent, type MessageEvent } from "./inbound.ts"
import { identify, refusedToken, type SlackIdentity } from "./identity.ts"
import { boltLogger } from "./logger.ts"
import { progressMessages } from "./progress.ts"
import { escapePlain, findByMetadata, outboxMetadata, uploadTextFile } from "./outgoing.ts"
import { AckFirstReceiver } from "./receiver.ts"
import { StoreFirstReceiver } from "./store-first.ts"
import { renderSlack, SLACK_LIMIT } from "./render.ts"
import { chatCommandOf, inboundOfCommand, SLASH_COMMAND, slashHelp } from "./slash.ts"
import { SocketWatchdog } from "./watchdog.ts"
import { SlackUserZones } from "./user-zones.ts"

export interface SlackChannelOptions {
  /** The address the HTTP receiver binds (default: every interface). */
  host?: string
  /** Overrides SLACK_PORT (tests pass 0 and read `httpPort`). */
  port?: number
  /** Web API retries of one call (429s wait out Retry-After first); the outbox retries beyond them. */
  retryConfig?: webApi.RetryOptions
  progressEditIntervalMs?: number
  /** How long delegated work runs before its status message is shown (default 3 s). */
  statusAfterMs?: number
  /** Socket Mode: restart a connection that claims to be open but carried nothing this long. */
  socketSilenceMs?: number
  /** How often an assistant thread's status is set again while busy (Slack drops it after two minutes). */
  statusRenewMs?: number
  appendIntervalMs?: number
  updateIntervalMs?: number
}

/** A few quick retries in place; a platform that stays down is the outbox's to retry, with backoff. */
const RETRY_CONFIG: webApi.RetryOptions = { retries: 3, factor: 2, minTimeout: 1000, maxTimeout: 10_000 }
const EVENTS_PATH = "/slack/events"
const CONNECT_RETRY_MS = 1000
const MAX_CONNECT_RETRY_MS = 60_000
/** Platform errors (`{ok: false, error}`) that mean "not now" rather than "never": every other
 *  one (channel_not_found, not_in_channel, is_archived, invalid_blocks, msg_too_long…) says the
 *  request itself is refused. team_added_to_org: the workspace is migrating to an Enterprise
 *  Grid and calls fail "intermittently until the transition is complete" (Slack's words). The
 *  token and scope errors say the deployment is misconfigured, which its owner fixes: replies
 *  wait for that instead of being dropped, as with Telegram's 401. */
const TRANSIENT_PLATFORM_ERRORS = new Set([
  "ratelimited",
  "internal_error",
  "fatal_error",
  "service_unavailable",
  "request_timeout",
  "team_added_to_org",
  "invalid_auth",
  "not_authed",
  "account_inactive",
  "token_revoked",
  "token_expired",
  "missing_scope",
  "no_permission",
  "ekm_access_denied",
  "org_login_required",
  "team_access_not_granted",
])
/** Leaves room for the ellipsis that says an edit's text was cut to one message. */
const EDIT_LIMIT = SLACK_LIMIT - 2

type SlackConfig = Config["slack"] & { botToken: string }

/**
 * Slack DMs, mentions and threads through Bolt: Socket Mode when an app token is set, else the
 * Events API over HTTP with signed requests. Events are acknowledged before they are handed to
 * the core; replies are rendered to mrkdwn and split under Slack's limits; buttons are Block Kit.
 * It knows nothing about agents.
 */
export class SlackChannel implements Channel {
  readonly name = "slack"
  readonly messageLimit = SLACK_LIMIT
  /** Posts and edits: created up front, since the outbox may send before start(). */
  private readonly web: webApi.WebClient
  private readonly clientOptions: webApi.WebClientOptions
  private readonly progressMessages: ReturnType<typeof progressMessages>
  private readonly userZones: SlackUserZones
  private readonly busy: BusyIndicator
  private readonly liveAnswers: SlackLive
  private readonly assistant: AssistantThreads
  private app?: App
  private watchdog?: SocketWatchdog
  private readonly connection = new ConnectionHealth()
  private port?: number
  private botUserId = ""
  /** Auth.test without retries (start-up tells a refused token from an outage) and the busy
   *  indicator (a sign of life that comes seconds late is worse than none). */
  private readonly quick: webApi.WebClient
  /** Ends the retries of an unreachable Slack when the channel stops. */
  private readonly stopping = new AbortController()
  private connecting?: Promise<void>
  /** Per conversation, the message being handed to the core: a conversation's events go in the order they came. */
  private handing = new Map<string, Promise<void>>()
  /** Threads in channels Steward takes part in (mentioned there, or replied there), so their messages need no mention;
   *  seeded at start with the conversations the core already has, so a restart forgets none. */
  private threads = new Set<string>()
  /** Where file downloads may carry the bot token. */
  private readonly fileOrigins: ReadonlySet<string>
  /** Per conversation, a reply of several parts of which only the first ones got out. */
  private partial = new Map<string, { key: string; ids: { channel: string; ts: string }[] }>()

  constructor(
    private readonly config: SlackConfig,
    private readonly log: Logger,
    private readonly options: SlackChannelOptions = {},
  ) {
    this.fileOrigins = tokenOrigins(config.apiUrl)
    this.clientOptions = {
      // The Web API client appends method names to the URL as is.
      slackApiUrl: config.apiUrl?.replace(/\/*$/, "/"),
      retryConfig: options.retryConfig ?? RETRY_CONFIG,
      logger: boltLogger(log),
    }
    this.web = new webApi.WebClient(config.botToken, this.clientOptions)
    this.progressMessages = progressMessages(this.web, log, { editIntervalMs: options.progressEditIntervalMs, showAfterMs: options.statusAfterMs })
    this.userZones = new SlackUserZones(this.web, log)
    this.liveAnswers = new SlackLive(this.web, log, options)
    this.assistant = new AssistantThreads(this.web, log, config.suggestedPrompts)
    this.quick = new webApi.WebClient(config.botToken, { ...this.clientOptions, retryConfig: { retries: 0 } })
    this.busy = new BusyIndicator(this.quick, log, options.statusRenewMs)
  }

  async tidy(): Promise<void> {
    await this.progressMessages.tidy()
    await this.busy.tidy()
    await this.liveAnswers.tidy()
  }

  /** The port the HTTP receiver listens on, once started in HTTP mode. */
  get httpPort(): number | undefined {
    return this.port
  }

  /**
   * Asks Slack who the bot is, then receives. A token Slack refuses ends start-up (exit 2); Slack
   * out of reach does not hold it: the outage is logged with the URL tried, shown by /healthz,
   * and auth.test is tried again in the background (1 s, doubling up to a minute).
   */
  async start(handlers: ChannelHandlers): Promise<void> {
    for (const conversation of handlers.conversations ?? []) this.threads.add(conversation)
    const first = await this.identify()
    if ("me" in first) return this.receive(handlers, first.me)
    this.connecting = this.keepIdentifying(handlers)
  }

  private get apiUrl(): string {
    return this.clientOptions.slackApiUrl ?? "https://slack.com/api/"
  }

  private async identify(): Promise<{ me: SlackIdentity } | { unreachable: string }> {
    const found = await identify(this.quick, this.apiUrl)
    if ("unreachable" in found) {
      this.connection.down(found.unreachable)
      this.log.warn(`${found.unreachable}; retrying`)
    } else this.log.info({ team: found.me.team, bot: found.me.user }, `Slack: workspace ${found.me.team ?? "?"} as @${found.me.user ?? "?"}`)
    return found
  }

  private async keepIdentifying(handlers: ChannelHandlers): Promise<void> {
    for (let attempt = 0; !this.stopping.signal.aborted; attempt++) {
      await sleep(Math.min(MAX_CONNECT_RETRY_MS, CONNECT_RETRY_MS * 2 ** attempt), undefined, { signal: this.stopping.signal }).catch(() => {})
      if (this.stopping.signal.aborted) return
      const found = await this.identify().catch((error: unknown) => {
        // The token was refused after all (revoked meanwhile): the owner must fix it; keep asking.
        this.connection.down(error instanceof Error ? error.message : String(error))
        this.log.error(error instanceof Error ? error.message : String(error))
        return undefined
      })
      if (found && "me" in found) return this.receive(handlers, found.me).catch((error: unknown) => this.log.error({ err: error }, "could not start receiving Slack events"))
    }
  }

  private async receive(handlers: ChannelHandlers, me: SlackIdentity): Promise<void> {
    this.botUserId = me.user_id ?? ""
    await this.progressMessages.restore(handlers.state, handlers.tidy !== false)
    await this.busy.restore(handlers.state, handlers.tidy !== false)
    await this.liveAnswers.restore(handlers.state, handlers.tidy !== false)
    const logger = boltLogger(this.log)
    const receiver = this.receiverOf(logger)
    // With the bot's ids given, Bolt does not call auth.test again.
    this.app = new App({ receiver, token: this.config.botToken, botId: me.bot_id, botUserId: me.user_id, logger, clientOptions: { ...this.clientOptions }, convoStore: false })
    this.route(handlers, me.team_id ?? "")
    if (receiver.inner instanceof SocketModeReceiver) {
      this.watchdog = new SocketWatchdog(receiver.inner.client, this.log, this.connection, this.options.socketSilenceMs)
      await this.app.start().catch((error: unknown) => {
        throw refusedToken(error, "SLACK_APP_TOKEN", "create an app-level token (xapp-…) with connections:write under Basic Information") ?? error
      })
      this.log.info("receiving Slack events over Socket Mode")
      return
    }
    const port = this.options.port ?? this.config.port
    const server = await this.app.start({ port, host: this.options.host }).catch((error: unknown) => {
      throw portError("SLACK_PORT", port, error, this.options.host)
    })
    this.port = (server.address() as AddressInfo).port
    this.connection.up()
    this.log.info({ port: this.port, path: EVENTS_PATH }, "receiving Slack events over HTTP")
  }

  async send(conversation: string, message: OutgoingMessage): Promise<{ messageId: string }> {
    const place = placeOf(conversation)
    if (message.file) {
      const messageId = await uploadFile(this.web, place, message.file, message.text)
      if (place.thread) this.threads.add(conversation)
      this.busy.posted(conversation)
      return { messageId }
    }
    // Plain: the outbox's fallback after an error of this adapter's own code; the text goes as it is.
    const parts = message.plain ? splitPlain(escapePlain(message.text), SLACK_LIMIT) : renderSlack(message.text, SLACK_LIMIT, this.renderFailed(conversation))
    if (parts.length === 0) throw new UndeliverableMessage("nothing to send: the message is empty")
    // The outbox retries a conversation's failed message before it sends the next one, so a
    // partial send of this same message is the one being retried: the parts that got out are skipped.
    const key = JSON.stringify(message)
    const previous = this.partial.get(conversation)
    const ids = previous?.key === key ? previous.ids : []
    this.partial.set(conversation, { key, ids })
    const buttons = message.buttons?.length ? message.buttons : undefined
    if (message.live && ids.length === 0 && !buttons) await this.endLive(place, message, parts[0]!, ids)
    for (let i = ids.length; i < parts.length; i++) {
      // Buttons go under the last part, after all of the text they answer.
      const blocks = buttons && i === parts.length - 1 ? withButtons(parts[i], buttons) : undefined
      // Each part carries the outbox id, so that after a crash the send can be found (findSent).
      const posted = await this.web.chat.postMessage({ channel: place.channel, thread_ts: place.thread, text: parts[i], blocks, mrkdwn: !message.plain, metadata: outboxMetadata(message.ref) })
      ids.push({ channel: posted.channel ?? place.channel, ts: posted.ts! })
    }
    if (message.attachment) await uploadTextFile(this.web, place, message.attachment)
    this.partial.delete(conversation)
    if (place.thread) this.threads.add(conversation)
    this.busy.posted(conversation)
    this.assistant.answered(conversation)
    // A question is edited when it closes: its id is that of the part that carries the buttons.
    const shown = buttons ? ids.at(-1)! : ids[0]
    return { messageId: messageIdOf(shown.channel, shown.ts) }
  }

  /** The final message of an answer shown as it was written: the message that grew with it
   *  (its stream stopped) is updated into the first part. An update that fails leaves no half answer. */
  private async endLive(place: Place, message: OutgoingMessage, first: string, ids: { channel: string; ts: string }[]): Promise<void> {
    await this.liveAnswers.finish(message.live!, place, async (ts) => {
      try {
        // No blocks: the text alone, as a message posted anew shows it.
        await this.web.chat.update({ channel: place.channel, ts, text: first, blocks: [], metadata: outboxMetadata(message.ref) })
        ids.push({ channel: place.channel, ts })
      } catch (error) {
        this.log.warn({ err: error, channel: place.channel }, "could not end the growing message in the answer; posting the answer anew")
        await this.web.chat.delete({ channel: place.channel, ts }).catch(() => {})
      }
    })
  }

  live(conversation: string, id: string, user: string): LiveText {
    return this.liveAnswers.open(placeOf(conversation), user.slice("slack:".length), id)
  }

  async edit(conversation: string, messageId: string, message: OutgoingMessage): Promise<void> {
    const { channel, ts } = messageRefOf(messageId)
    const parts = renderSlack(message.text, EDIT_LIMIT, this.renderFailed(conversation))
    const text = parts.length > 1 ? `${parts[0]} …` : (parts[0] ?? "…")
    // Without `blocks` Slack would keep the old ones, buttons included: the new text replaces them.
    const blocks: Block[] = [section(text)]
    await this.web.chat.update({ channel, ts, text, blocks })
  }

  /** A message posted with the outbox id `ref` since `since` (its metadata), if there is one. */
  findSent(conversation: string, ref: string, since: Date): Promise<{ messageId: string } | undefined> {
    return findByMetadata(this.web, placeOf(conversation), ref, since)
  }

  /** Logs a message the renderer could not format, which then goes out as plain text. */
  private renderFailed(conversation: string): (error: unknown) => void {
    return (error) => this.log.error({ err: error, conversation }, "could not render the message as mrkdwn; sending it as plain text")
  }

  /** A platform error Slack will give again (see TRANSIENT_PLATFORM_ERRORS); request and HTTP
   *  errors (network, 5xx) and rate limits the client gave up waiting out are transient. */
  isPermanent(error: unknown): boolean {
    if (!(error instanceof Error) || (error as Partial<webApi.WebAPIPlatformError>).code !== webApi.ErrorCode.PlatformError) return false
    const code = (error as webApi.WebAPIPlatformError).data?.error
    return typeof code === "string" && !TRANSIENT_PLATFORM_ERRORS.has(code)
  }

  /** Socket Mode: the socket is open; HTTP: the server listens. */
  health(): ChannelHealth {
    return this.connection.health()
  }

  progress(conversation: string, update: ProgressUpdate): void {
    this.progressMessages.update(placeOf(conversation), update)
  }

  /** The assistant thread's status, else 👀 on the user's message that started the work. */
  activity(conversation: string, busy: boolean): void {
    this.busy.set(conversation, busy)
  }

  async stop(): Promise<void> {
    this.stopping.abort()
    await this.connecting
    this.watchdog?.stop()
    this.progressMessages.stop()
    this.liveAnswers.stop()
    await this.app?.stop().catch((error: unknown) => this.log.warn({ err: error }, "could not stop the Slack receiver cleanly"))
    this.app = undefined
    await Promise.allSettled(this.handing.values())
    await this.busy.stop()
  }

  private route(handlers: ChannelHandlers, team: string): void {
    const app = this.app!
    // Rethrown: the event is then not acknowledged, and Slack sends it again (StoreFirstReceiver).
    app.error(async (error) => {
      this.log.error({ err: error }, "could not handle a Slack event")
      throw error
    })
    // Bolt has acknowledged an event before its listeners run; what follows is after the ack.
    app.event(/^(?:message|app_mention)$/, async ({ event, body }) => {
      const message = event as unknown as MessageEvent
      const inbound = inboundOfEvent(message, { team, eventId: body.event_id, botUserId: this.botUserId, botToken: this.config.botToken, fileOrigins: this.fileOrigins, follows: (conversation) => this.threads.has(conversation) })
      if (inbound && message.type === "app_mention") this.threads.add(inbound.conversation)
      if (inbound) this.assistant.wrote(inbound.conversation, inbound.text)
      const outcome = await this.hand(handlers, inbound, { channel: message.channel, ts: message.ts })
      if (outcome?.queued) this.busy.acknowledge({ channel: message.channel, ts: message.ts })
    })
    app.event("assistant_thread_started", async ({ event }) => this.assistant.started(event as AssistantThreadEvent))
    app.event("assistant_thread_context_changed", async ({ event }) => this.assistant.contextChanged(event as AssistantThreadEvent))
    app.action<BlockAction<ButtonAction>>({ type: "block_actions", action_id: ACTION_ID }, async ({ ack, body }) => {
      // Held until the press is stored (StoreFirstReceiver).
      await ack()
      const outcome = await this.hand(handlers, inboundOfAction(body))
      if (outcome?.notice) await this.tellOnly(body, outcome.notice)
    })
    // `/steward tasks` goes the way a typed `/tasks` goes, in the user's DM with Steward.
    app.command(SLASH_COMMAND, async ({ command, ack }) => {
      const text = chatCommandOf(command.text)
      if (text === undefined) return ack({ response_type: "ephemeral", text: slashHelp(handlers.commands) })
      const inDm = command.channel_id.startsWith("D")
      await ack(inDm ? undefined : { response_type: "ephemeral", text: "I'll answer in our DM." })
      const dm = inDm ? command.channel_id : (await this.web.conversations.open({ users: command.user_id })).channel?.id
      if (dm) await this.hand(handlers, inboundOfCommand(command, text, dm))
    })
  }

  private receiverOf(logger: BoltLogger): StoreFirstReceiver<SocketModeReceiver | AckFirstReceiver> {
    const { appToken, signingSecret } = this.config
    if (appToken) return new StoreFirstReceiver(new SocketModeReceiver({ appToken, logger, installerOptions: { clientOptions: { ...this.clientOptions } } }))
    // Config validation refuses this combination; the check stays because unsigned events must never be taken.
    if (!signingSecret) throw new Error("Slack over HTTP needs a signing secret (or an app token for Socket Mode)")
    return new StoreFirstReceiver(new AckFirstReceiver({ signingSecret, path: EVENTS_PATH, logger }))
  }

  /** A short note only the presser of a button sees (chat.postEphemeral). */
  private async tellOnly(body: BlockAction<ButtonAction>, text: string): Promise<void> {
    const channel = (body.container.channel_id as string | undefined) ?? body.channel?.id
    if (!channel) return
    const thread = body.message?.thread_ts as string | undefined
    await this.web.chat.postEphemeral({ channel, user: body.user.id, text, thread_ts: thread }).catch((error: unknown) => this.log.warn({ err: error }, "could not show a note to the presser"))
  }

  /** onMessage rejects when the core could not store the message: logged and rethrown, so the
   *  event is not acknowledged and Slack sends it again. `source` is the platform message that
   *  brought it, for the busy indicator. */
  private hand(handlers: ChannelHandlers, message: InboundMessage | undefined, source?: MessageRef): Promise<InboundOutcome | void> {
    if (!message) return Promise.resolve()
    const { conversation } = message
    const handed = (this.handing.get(conversation) ?? Promise.resolve())
      // After the I/O already read: in a burst, the other events are read before this one's work starts.
      .then(() => new Promise((resolve) => setImmediate(resolve)))
      .then(() => this.userZones.zoneOf(message.user.slice("slack:".length)))
      .then((timezone) => this.busy.during(conversation, source, () => handlers.onMessage(timezone === undefined ? message : { ...message, timezone })))
    const settled = handed.then(
      () => {},
      (error: unknown) => this.log.error({ err: error, conversation, eventId: message.eventId }, "could not take a Slack message"),
    )
    this.handing.set(conversation, settled)
    void settled.then(() => {
      if (this.handing.get(conversation) === settled) this.handing.delete(conversation)
    })
    return handed
  }
}
