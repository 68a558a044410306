import { randomUUID } from "node:crypto"
import type { Logger } from "pino"
import type { ChannelState, LiveText } from "../../src/channel/channel.ts"
import { PlacePace } from "./place-pace.ts"

/**
 * One way a platform shows text as it grows (a Telegram draft, a Slack stream, a message edited
 * in place), referred to by `Ref` once started. Ways are tried in order: when one is refused
 * (an API error), the answer goes on in the next.
 */
export interface LiveWay<Place, Ref> {
  /** For the log and the channel's state ("draft", "stream", "message"). */
  readonly name: string
  /** The shortest pause between the end of one call and the start of the next, in one place
   *  (whichever answer they show). */
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
  /** A call is scheduled or under way: the next is scheduled once it has ended. */
  calling: boolean
  /** Aborted when the answer closes: a call still waiting for its turn is not made. */
  closing: AbortController
  /** The platform calls, one after another. */
  work: Promise<void>
  closed: boolean
}

/**
 * The answers a channel shows as they are written. Calls are paced per place and way (the first
 * text at once, then the newest text once the way's interval has passed since the place's last
 * call, the final message's in-place call included) and never overlap. A refused
 * way gives way to the next one. A started answer that must be cleaned up after a crash is
 * remembered in the channel's durable state until the final message replaces it or it is
 * removed; the next start ends those left behind (`tidy`). It is a courtesy: failures are logged,
 * never thrown at the core — the final message is sent by the outbox whatever happens here.
 */
export class LiveMessages<Place, Ref> {
  private readonly answers = new Map<string, Answer<Place, Ref>>()
  private readonly pace = new PlacePace()
  private state?: ChannelState

  constructor(
    private readonly log: Logger,
    /** The ways by name, to end what an earlier run left shown. */
    private readonly ways: Record<string, LiveWay<Place, Ref>>,
    /** The chat a place is in: the platform's limits are per chat. */
    private readonly chatOf: (place: Place) => string,
  ) {}

  /** Starts answer `id`, shown the first of `ways` that works. */
  open(id: string, place: Place, ways: LiveWay<Place, Ref>[]): LiveText {
    const answer: Answer<Place, Ref> = { place, ways: [...ways], latest: "", shown: "", calling: false, closing: new AbortController(), work: Promise.resolve(), closed: false }
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

  /** Ends answer `id` for its final message: pacing stopped, the last call done, then `end` run
   *  with what showed it — in the place's next turn when the way ends in place (the final edit
   *  is one more call on it: it keeps the pace too). Nothing is run when nothing of it is shown
   *  here (never started, or shown by a process before a restart). */
  async finish(id: string, end: (shown: Shown<Place, Ref>) => Promise<void>): Promise<void> {
    const answer = this.answers.get(id)
    if (!answer) return
    this.answers.delete(id)
    this.close(answer)
    await answer.work
    const way = answer.ways[0]
    const ref = answer.ref
    if (ref === undefined || !way) return
    await this.forget(answer)
    if (way.endsInPlace) await this.pace.run(this.laneOf(way, answer.place), way.intervalMs, () => end({ way, ref }))
    else await end({ way, ref })
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
    answer.closing.abort()
  }

  private laneOf(way: LiveWay<Place, Ref>, place: Place): string {
    return `${way.name}:${this.chatOf(place)}`
  }

  private schedule(answer: Answer<Place, Ref>): void {
    if (answer.calling || answer.closed) return
    const way = answer.ways[0]
    if (!way) return
    answer.calling = true
    this.queue(answer, () =>
      this.pace.run(this.laneOf(way, answer.place), way.intervalMs, () => this.show(answer, way), answer.closing.signal).catch((error: unknown) => {
        // A turn the closing answer no longer waits for is no failure.
        if (!answer.closing.signal.aborted) throw error
      }),
    )
  }

  private async show(answer: Answer<Place, Ref>, way: LiveWay<Place, Ref>): Promise<void> {
    // The newest text when the turn comes, not when it was asked for.
    const text = answer.latest
    if (answer.closed || text === answer.shown) {
      answer.calling = false
      return
    }
    try {
      const ref = await way.show(answer.place, text, answer.ref, answer.shown)
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
