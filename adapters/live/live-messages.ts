import { randomUUID } from "node:crypto"
import { setTimeout as sleep } from "node:timers/promises"
import type { Logger } from "pino"
import type { ChannelState, LiveText } from "../../src/channel/channel.ts"

/**
 * One way a platform shows text as it grows (a Telegram draft, a Slack stream, a message edited
 * in place), referred to by `Ref` once started. Ways are tried in order: when one is refused
 * (an API error), the answer goes on in the next.
 */
export interface LiveWay<Place, Ref> {
  /** For the log and the channel's state ("draft", "stream", "message"). */
  readonly name: string
  /** The shortest pause between the end of one call and the start of the next. */
  readonly intervalMs: number
  /** The final message is made of what this way showed (an edit of it), so it keeps the pace;
   *  false: it is a message of its own (a draft's), sent at once. */
  readonly endsInPlace: boolean
  /** Shows the whole text so far (`shown`: what the previous call showed); the first call (no
   *  `ref`) starts it and returns its ref. */
  show(place: Place, text: string, ref: Ref | undefined, shown: string): Promise<Ref>
  /** Takes what was shown away (a step that went on to call tools, a failed turn). */
  remove(place: Place, ref: Ref): Promise<void>
  /** Ends what a process that stopped left shown (after a crash mid-answer); without it nothing
   *  is left to end (a draft disappears by itself) and nothing is remembered. */
  interrupted?(place: Place, ref: Ref): Promise<void>
}

/** What the final message finds of an answer shown live: the way it was shown and its ref. */
export type Shown<Place, Ref> = { way: LiveWay<Place, Ref>; ref: Ref }

/** Shown answers a crash may leave behind, in the channel's state: `live/<uuid>`. */
const STATE_PREFIX = "live/"

type Answer<Place, Ref> = {
  place: Place
  ways: LiveWay<Place, Ref>[]
  ref?: Ref
  /** Where the started answer is remembered in the channel's state. */
  key?: string
  latest: string
  shown: string
  lastCallAt: number
  timer?: NodeJS.Timeout
  /** A call is scheduled or under way: the next is scheduled once it has ended. */
  calling: boolean
  /** The platform calls, one after another. */
  work: Promise<void>
  closed: boolean
}

/**
 * The answers a channel shows as they are written. Calls are paced per answer (the first text at
 * once, then the newest text once the way's interval has passed) and never overlap. A refused
 * way gives way to the next one. A started answer that must be cleaned up after a crash is
 * remembered in the channel's durable state until the final message replaces it or it is
 * removed; the next start ends those left behind (`tidy`). It is a courtesy: failures are logged,
 * never thrown at the core — the final message is sent by the outbox whatever happens here.
 */
export class LiveMessages<Place, Ref> {
  private readonly answers = new Map<string, Answer<Place, Ref>>()
  private state?: ChannelState

  constructor(
    private readonly log: Logger,
    /** The ways by name, to end what an earlier run left shown. */
    private readonly ways: Record<string, LiveWay<Place, Ref>>,
  ) {}

  /** Starts answer `id`, shown the first of `ways` that works. */
  open(id: string, place: Place, ways: LiveWay<Place, Ref>[]): LiveText {
    const answer: Answer<Place, Ref> = { place, ways: [...ways], latest: "", shown: "", lastCallAt: 0, calling: false, work: Promise.resolve(), closed: false }
    this.answers.set(id, answer)
    return {
      update: (text) => {
        if (answer.closed) return
        answer.latest = text
        this.schedule(answer)
      },
      discard: () => {
        if (this.answers.get(id) !== answer) return
        this.answers.delete(id)
        this.close(answer)
        this.queue(answer, async () => {
          if (answer.ref !== undefined) await answer.ways[0]!.remove(place, answer.ref)
          await this.forget(answer)
        })
      },
    }
  }

  /** Answer `id` for its final message: pacing stopped and the last call done. Undefined when
   *  nothing of it is shown here (never started, or shown by a process before a restart). */
  async finish(id: string): Promise<Shown<Place, Ref> | undefined> {
    const answer = this.answers.get(id)
    if (!answer) return undefined
    this.answers.delete(id)
    this.close(answer)
    await answer.work
    const way = answer.ways[0]
    if (answer.ref === undefined || !way) return undefined
    // A final message made of what was shown is one more call on it: it keeps the way's pace too.
    const wait = answer.lastCallAt + way.intervalMs - Date.now()
    if (way.endsInPlace && wait > 0) await sleep(wait)
    await this.forget(answer)
    return { way, ref: answer.ref }
  }

  /** Uses `state` from now on, and (unless `tidy` is false) ends the answers an earlier run left. */
  async restore(state: ChannelState | undefined, tidy = true): Promise<void> {
    this.state = state
    if (tidy) await this.tidy()
  }

  /** Ends the answers on record: those a stopped process left shown. */
  async tidy(): Promise<void> {
    for (const { key, value } of (await this.state?.list<{ way: string; place: Place; ref: Ref }>(STATE_PREFIX)) ?? []) {
      await this.ways[value.way]?.interrupted?.(value.place, value.ref).catch((error: unknown) => this.log.warn({ err: error, way: value.way }, "could not end an answer left half-shown before a restart"))
      await this.state!.delete(key)
    }
  }

  stop(): void {
    for (const answer of this.answers.values()) this.close(answer)
    this.answers.clear()
  }

  private close(answer: Answer<Place, Ref>): void {
    answer.closed = true
    clearTimeout(answer.timer)
    answer.timer = undefined
  }

  private schedule(answer: Answer<Place, Ref>): void {
    if (answer.calling || answer.closed) return
    const way = answer.ways[0]
    if (!way) return
    answer.calling = true
    const wait = Math.max(0, answer.lastCallAt + way.intervalMs - Date.now())
    answer.timer = setTimeout(() => {
      answer.timer = undefined
      this.queue(answer, () => this.show(answer))
    }, wait)
    answer.timer.unref()
  }

  private async show(answer: Answer<Place, Ref>): Promise<void> {
    const text = answer.latest
    const way = answer.ways[0]
    if (answer.closed || !way || text === answer.shown) {
      answer.calling = false
      return
    }
    try {
      const ref = await way.show(answer.place, text, answer.ref, answer.shown)
      // Paced from the end of a call: the next one leaves after the platform has this one, so
      // they also arrive an interval apart.
      answer.lastCallAt = Date.now()
      answer.shown = text
      if (answer.ref === undefined && way.interrupted && this.state) {
        answer.key = `${STATE_PREFIX}${randomUUID()}`
        await this.state.set(answer.key, { way: way.name, place: answer.place, ref })
      }
      answer.ref = ref
    } catch (error) {
      // Refused: the next way starts over with the whole text (what this one showed is taken away).
      this.log.warn({ err: error, way: way.name }, "could not show an answer as it is written; trying the next way")
      if (answer.ref !== undefined) await way.remove(answer.place, answer.ref).catch(() => {})
      await this.forget(answer)
      answer.ways.shift()
      answer.ref = undefined
      answer.shown = ""
      answer.lastCallAt = 0
    }
    answer.calling = false
    // Text that arrived during the call.
    if (answer.latest !== answer.shown) this.schedule(answer)
  }

  private async forget(answer: Answer<Place, Ref>): Promise<void> {
    if (answer.key) await this.state?.delete(answer.key)
    answer.key = undefined
  }

  private queue(answer: Answer<Place, Ref>, call: () => Promise<void>): void {
    answer.work = answer.work.then(call).catch((error: unknown) => this.log.warn({ err: error }, "could not show an answer as it is written"))
  }
}
