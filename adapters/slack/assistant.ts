import type { webApi } from "@slack/bolt"
import type { Logger } from "pino"
import { placeOf } from "./conversation.ts"

/** What `assistant_thread_started` and `assistant_thread_context_changed` carry. */
export type AssistantThreadEvent = { assistant_thread?: { channel_id?: string; thread_ts?: string; context?: Record<string, unknown> } }

/** Slack shows at most four suggested prompts; a title is cut to this many characters. */
const MAX_PROMPTS = 4
const MAX_TITLE = 60

export const DEFAULT_SUGGESTED_PROMPTS = ["What can you do for me?", "What is running right now?", "Remind me of something tomorrow morning"]

/**
 * Slack's assistant container: suggested prompts when a user opens an assistant thread, and the
 * thread's title, set from the user's first message once it has its first answer. A courtesy:
 * failures are logged and never reach the core.
 */
export class AssistantThreads {
  /** Per assistant thread not yet titled, the first message the user wrote in it. */
  private readonly firstMessages = new Map<string, string>()
  private readonly titled = new Set<string>()

  constructor(
    private readonly web: webApi.WebClient,
    private readonly log: Logger,
    private readonly prompts: readonly string[] = DEFAULT_SUGGESTED_PROMPTS,
  ) {}

  /** assistant_thread_started: the suggested prompts, at once. */
  async started(event: AssistantThreadEvent): Promise<void> {
    const { channel_id: channel, thread_ts: thread } = event.assistant_thread ?? {}
    if (!channel || !thread || this.prompts.length === 0) return
    const prompts = this.prompts.slice(0, MAX_PROMPTS).map((prompt) => ({ title: prompt, message: prompt }))
    await this.web.assistant.threads.setSuggestedPrompts({ channel_id: channel, thread_ts: thread, prompts: prompts as [(typeof prompts)[0]] }).catch((error: unknown) => this.log.warn({ err: error, channel }, "could not set the suggested prompts"))
  }

  /** assistant_thread_context_changed: the user looks at another channel beside the thread.
   *  Steward does not read channels it was not asked into, so there is nothing to update. */
  contextChanged(event: AssistantThreadEvent): void {
    this.log.debug({ channel: event.assistant_thread?.channel_id }, "assistant thread context changed")
  }

  /** A user's message in a DM thread: the first one names the thread once it is answered. */
  wrote(conversation: string, text: string): void {
    const place = placeOf(conversation)
    if (!place.thread || !place.channel.startsWith("D") || this.titled.has(conversation) || this.firstMessages.has(conversation) || !text.trim()) return
    this.firstMessages.set(conversation, text.trim())
  }

  /** Steward posted in the conversation: an assistant thread's first answer sets its title. */
  answered(conversation: string): void {
    const first = this.firstMessages.get(conversation)
    if (first === undefined) return
    this.firstMessages.delete(conversation)
    this.titled.add(conversation)
    const { channel, thread } = placeOf(conversation)
    const title = first.length <= MAX_TITLE ? first : `${first.slice(0, MAX_TITLE - 1)}…`
    this.web.assistant.threads.setTitle({ channel_id: channel, thread_ts: thread!, title }).catch((error: unknown) => this.log.warn({ err: error, channel }, "could not set the assistant thread's title"))
  }
}
