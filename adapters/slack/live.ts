import type { webApi } from "@slack/bolt"
import type { Logger } from "pino"
import type { LiveText } from "../../src/channel/channel.ts"
import { LiveMessages, type LiveWay } from "../live/live-messages.ts"
import type { Place } from "./conversation.ts"
import { escapePlain } from "./outgoing.ts"
import { SLACK_LIMIT } from "./render.ts"

export interface SlackLiveOptions {
  /** Pause between two appends to a stream (default 500 ms). */
  appendIntervalMs?: number
  /** Pause between two updates of a growing message (default 1 s). */
  updateIntervalMs?: number
}

/** Where an answer is shown: the conversation's place, and the user it is for (a stream outside a
 *  DM names its recipient). */
type LivePlace = Place & { user: string }

/** At most one update a second, as Slack allows for chat.update. */
const UPDATE_INTERVAL_MS = 1000
const CLIPPED = "…"
const INTERRUPTED = "\n\n_(interrupted — the full answer follows)_"

/** A growing message's text as one message holds it: the newest part of a long answer. Sent
 *  without formatting, since half-written Markdown is no valid mrkdwn. */
const clip = (text: string) => escapePlain(text.length <= SLACK_LIMIT ? text : CLIPPED + text.slice(text.length - SLACK_LIMIT + CLIPPED.length))

/**
 * Slack's live answers. In a thread (an assistant thread or a channel thread) the answer is a
 * native stream — chat.startStream, chat.appendStream with what is new, chat.stopStream — the
 * raw methods, paced here rather than by the SDK's chatStream helper, whose 256-character buffer
 * would hold the first words back. A top-level DM has no streams, and a refused stream gives way:
 * one chat.postMessage, then chat.update at most once a second. Either way the final message is
 * that message updated to the rendered answer (`finish`).
 */
export class SlackLive {
  private readonly messages: LiveMessages<LivePlace, string>
  private readonly stream: LiveWay<LivePlace, string>
  private readonly message: LiveWay<LivePlace, string>

  constructor(
    private readonly web: webApi.WebClient,
    log: Logger,
    options: SlackLiveOptions = {},
  ) {
    this.stream = {
      name: "stream",
      intervalMs: options.appendIntervalMs ?? 500,
      endsInPlace: true,
      show: async (place, text, ts, shown) => {
        if (ts === undefined) {
          const recipient = place.channel.startsWith("D") ? {} : { recipient_team_id: place.team, recipient_user_id: place.user }
          return (await web.chat.startStream({ channel: place.channel, thread_ts: place.thread!, markdown_text: text, ...recipient })).ts!
        }
        // The text only grows; what is new since the last call is appended.
        const added = text.startsWith(shown) ? text.slice(shown.length) : ""
        if (added) await web.chat.appendStream({ channel: place.channel, ts, markdown_text: added })
        return ts
      },
      remove: async (place, ts) => {
        await web.chat.stopStream({ channel: place.channel, ts })
        await web.chat.delete({ channel: place.channel, ts })
      },
      // A stream left open would look like an answer still coming: it is stopped and says so.
      interrupted: async (place, ts) => void (await web.chat.stopStream({ channel: place.channel, ts, markdown_text: INTERRUPTED })),
    }
    const remove = async (place: LivePlace, ts: string) => void (await web.chat.delete({ channel: place.channel, ts }))
    this.message = {
      name: "message",
      intervalMs: options.updateIntervalMs ?? UPDATE_INTERVAL_MS,
      endsInPlace: true,
      show: async (place, text, ts) => {
        if (ts === undefined) return (await web.chat.postMessage({ channel: place.channel, thread_ts: place.thread, text: clip(text), mrkdwn: false })).ts!
        await web.chat.update({ channel: place.channel, ts, text: clip(text) })
        return ts
      },
      remove,
      interrupted: remove,
    }
    this.messages = new LiveMessages(log, { stream: this.stream, message: this.message }, (place) => place.channel)
  }

  open(place: Place, user: string, id: string): LiveText {
    return this.messages.open(id, { ...place, user }, place.thread ? [this.stream, this.message] : [this.message])
  }

  /** Ends answer `id`: `update` is given the ts of the message that showed it in `place` (its
   *  stream stopped), to be updated into the final answer in the channel's next turn; not called
   *  when nothing of it is shown here. */
  async finish(id: string, place: Place, update: (ts: string) => Promise<void>): Promise<void> {
    await this.messages.finish(id, async (shown) => {
      if (shown.way === this.stream) await this.web.chat.stopStream({ channel: place.channel, ts: shown.ref })
      await update(shown.ref)
    })
  }

  restore: LiveMessages<LivePlace, string>["restore"] = (state, tidy) => this.messages.restore(state, tidy)
  tidy = () => this.messages.tidy()
  stop = () => this.messages.stop()
}
