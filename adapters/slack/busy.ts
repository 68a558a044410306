import { webApi } from "@slack/bolt"
import type { Logger } from "pino"
import type { ChannelState } from "../../src/channel/channel.ts"
import { placeOf } from "./conversation.ts"

/** What an assistant thread shows under the app's name while Steward works. */
export const THINKING_STATUS = "is thinking…"
/** 👀 on the user's message, where there is no assistant thread. */
export const BUSY_REACTION = "eyes"

/** A user's message in Slack: where a reaction goes. */
export type MessageRef = { channel: string; ts: string }
type Shown = { kind: "status"; channel: string; thread: string } | ({ kind: "reaction" } & MessageRef)

/** Slack drops an assistant thread status after two minutes without a message: it is set again sooner. */
const STATUS_RENEW_MS = 90_000
/** Indicators shown, in the channel's state: `busy/<conversation>`, cleared at the next start if a stop or crash left them. */
const STATE_PREFIX = "busy/"
/** Answers that mean the reaction already is as wanted (the user removed it, or the message is gone). */
const SETTLED_REACTION_ERRORS = new Set(["already_reacted", "no_reaction", "message_not_found"])

const platformErrorOf = (error: unknown): string | undefined => {
  if ((error as Partial<webApi.WebAPIPlatformError> | undefined)?.code !== webApi.ErrorCode.PlatformError) return undefined
  const code: unknown = (error as webApi.WebAPIPlatformError).data?.error
  return typeof code === "string" ? code : undefined
}

/**
 * Shows that work for a conversation is under way, from busy until not busy. In a DM's thread —
 * where Slack's "Agents & AI apps" put assistant threads — the assistant thread status ("is
 * thinking…", cleared with an empty status); where Slack refuses that (not an assistant thread,
 * no `assistant:write`), and everywhere else, 👀 on the user's message that started the work,
 * removed at the end. Slack drops the status when the app posts in the thread and after two
 * minutes, so while busy it is set again after each post and every 90 s. A wake-up with no user message behind it (a task's results, a schedule)
 * shows nothing outside assistant threads. The calls of one conversation go one after another,
 * so a removal never overtakes its add. A courtesy: failures are logged and never reach the core.
 */
export class BusyIndicator {
  /** Per conversation, the user's message being handed to the core right now. */
  private readonly arriving = new Map<string, MessageRef>()
  private readonly shown = new Map<string, Shown>()
  /** DM threads where Slack refused the assistant status: reactions there from now on. */
  private readonly refused = new Set<string>()
  private readonly chains = new Map<string, Promise<void>>()
  private readonly renewals = new Map<string, NodeJS.Timeout>()
  private state?: ChannelState
  private stopped = false

  constructor(
    private readonly web: webApi.WebClient,
    private readonly log: Logger,
    private readonly statusRenewMs = STATUS_RENEW_MS,
  ) {}

  /** Runs `handing` (the message going to the core) with `message` as the one that work starting meanwhile shows on. */
  async during<T>(conversation: string, message: MessageRef | undefined, handing: () => Promise<T>): Promise<T> {
    if (!message) return handing()
    this.arriving.set(conversation, message)
    try {
      return await handing()
    } finally {
      if (this.arriving.get(conversation) === message) this.arriving.delete(conversation)
    }
  }

  set(conversation: string, busy: boolean): void {
    // After stop the store may be closing: what is still shown is cleared at the next start.
    if (this.stopped) return
    const message = this.arriving.get(conversation)
    this.queue(conversation, busy ? () => this.show(conversation, message) : () => this.clear(conversation))
  }

  /** 👀 on a message the core queued behind a turn under way, so its sender sees it was taken; it
   *  stays, as the answer to it comes later. Sent at once, beside the conversation's chain: it must
   *  not wait behind a slow status call. */
  acknowledge(message: MessageRef): void {
    if (this.stopped) return
    this.web.reactions
      .add({ channel: message.channel, timestamp: message.ts, name: BUSY_REACTION })
      .catch(settledReaction)
      .catch((error: unknown) => this.log.warn({ err: error, channel: message.channel }, "could not mark a queued message as seen"))
  }

  /** Steward posted in the conversation, which ends an assistant thread's status: it is set again while busy. */
  posted(conversation: string): void {
    if (this.stopped || this.shown.get(conversation)?.kind !== "status") return
    this.queue(conversation, () => this.renewStatus(conversation))
  }

  /** Uses `state` from now on, and (unless `tidy` is false) clears the indicators an earlier
   *  run left shown. */
  async restore(state: ChannelState | undefined, tidy = true): Promise<void> {
    this.state = state
    if (tidy) await this.tidy()
  }

  /** Clears the indicators on record: those an earlier run left shown. */
  async tidy(): Promise<void> {
    for (const { key, value } of (await this.state?.list<Shown>(STATE_PREFIX)) ?? []) {
      await this.hide(value).catch((error: unknown) => this.log.warn({ err: error, channel: value.channel }, "could not clear a busy indicator left from before"))
      await this.state!.delete(key)
    }
  }

  /** Lets the calls under way finish; nothing new is shown or cleared after it. */
  async stop(): Promise<void> {
    this.stopped = true
    for (const timer of this.renewals.values()) clearInterval(timer)
    this.renewals.clear()
    await Promise.allSettled(this.chains.values())
  }

  private async show(conversation: string, message: MessageRef | undefined): Promise<void> {
    const { channel, thread } = placeOf(conversation)
    if (thread && channel.startsWith("D") && !this.refused.has(conversation)) {
      const shown: Shown = { kind: "status", channel, thread }
      await this.remember(conversation, shown)
      try {
        await this.web.assistant.threads.setStatus({ channel_id: channel, thread_ts: thread, status: THINKING_STATUS })
        // unref: a thread that looks busy must not keep the process alive on its own.
        this.renewals.set(conversation, setInterval(() => this.posted(conversation), this.statusRenewMs).unref())
        return
      } catch (error) {
        const code = platformErrorOf(error)
        if (code === undefined) throw error
        this.log.info({ channel, code }, "no assistant thread status here; showing a reaction instead")
        this.refused.add(conversation)
        await this.forget(conversation)
      }
    }
    if (!message) return
    await this.remember(conversation, { kind: "reaction", ...message })
    await this.web.reactions.add({ channel: message.channel, timestamp: message.ts, name: BUSY_REACTION }).catch(settledReaction)
  }

  private async renewStatus(conversation: string): Promise<void> {
    const shown = this.shown.get(conversation)
    if (shown?.kind === "status") await this.web.assistant.threads.setStatus({ channel_id: shown.channel, thread_ts: shown.thread, status: THINKING_STATUS })
  }

  private async clear(conversation: string): Promise<void> {
    clearInterval(this.renewals.get(conversation))
    this.renewals.delete(conversation)
    const shown = this.shown.get(conversation)
    if (!shown) return
    await this.hide(shown)
    await this.forget(conversation)
  }

  private async hide(shown: Shown): Promise<void> {
    if (shown.kind === "status") await this.web.assistant.threads.setStatus({ channel_id: shown.channel, thread_ts: shown.thread, status: "" })
    else await this.web.reactions.remove({ channel: shown.channel, timestamp: shown.ts, name: BUSY_REACTION }).catch(settledReaction)
  }

  /** Written before it is shown, so a crash in between still clears it at the next start. */
  private async remember(conversation: string, shown: Shown): Promise<void> {
    this.shown.set(conversation, shown)
    await this.state?.set(`${STATE_PREFIX}${conversation}`, shown)
  }

  private async forget(conversation: string): Promise<void> {
    this.shown.delete(conversation)
    await this.state?.delete(`${STATE_PREFIX}${conversation}`)
  }

  private queue(conversation: string, call: () => Promise<void>): void {
    const chained = (this.chains.get(conversation) ?? Promise.resolve()).then(call).catch((error: unknown) => this.log.warn({ err: error, conversation }, "could not show or clear a busy indicator"))
    this.chains.set(conversation, chained)
    void chained.then(() => {
      if (this.chains.get(conversation) === chained) this.chains.delete(conversation)
    })
  }
}

function settledReaction(error: unknown): void {
  if (!SETTLED_REACTION_ERRORS.has(platformErrorOf(error) ?? "")) throw error
}
