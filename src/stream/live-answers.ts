import type { LiveText } from "../channel/channel.ts"
import type { AnswerStream } from "../agent/stream-step.ts"
import { newId } from "../store/ids.ts"

/** A live answer handed to the message that completes it. */
export interface TakenAnswer {
  id: string
  /** The message turned out to be one sent before (a replayed call): what was shown goes. */
  discard(): void
}

/**
 * The answers of one Teller turn shown while they are written: each key the loop streams (a
 * step's text, a reply call) gets a live text of its own from the channel. The message that
 * completes an answer takes its id (`take`); whatever is still shown when the turn ends was no
 * answer and is taken away (`close`).
 */
export class LiveAnswers implements AnswerStream {
  private shown = new Map<string, { id: string; live: LiveText }>()

  constructor(private readonly open: (id: string) => LiveText) {}

  show(key: string, text: string): void {
    let answer = this.shown.get(key)
    if (!answer) {
      const id = newId()
      answer = { id, live: this.open(id) }
      this.shown.set(key, answer)
    }
    answer.live.update(text)
  }

  drop(key: string): void {
    this.shown.get(key)?.live.discard()
    this.shown.delete(key)
  }

  take(key: string): TakenAnswer | undefined {
    const answer = this.shown.get(key)
    if (!answer) return undefined
    this.shown.delete(key)
    return { id: answer.id, discard: () => answer.live.discard() }
  }

  close(): void {
    for (const key of [...this.shown.keys()]) this.drop(key)
  }
}
