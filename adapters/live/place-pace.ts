import { setTimeout as sleep } from "node:timers/promises"

/** One place's calls: the last one's end, the queue's tail, how many are waiting or running. */
type Lane = { endedAt: number; tail: Promise<void>; held: number }

/** Waits until `performance.now()` reaches `due`: a timer counts whole milliseconds of the
 *  loop's clock, so one alone may end a fraction of a millisecond early. */
async function until(due: number, signal?: AbortSignal): Promise<void> {
  for (let wait = due - performance.now(); wait > 0; wait = due - performance.now()) await sleep(Math.ceil(wait), undefined, { signal })
}

/**
 * The pace of a platform's calls per place (a chat): one at a time, each starting `intervalMs`
 * or more after the previous one ended, whichever answer makes it — a platform limits edits per
 * chat, not per message. Paced from a call's end, so the calls also reach the platform an
 * interval apart.
 */
export class PlacePace {
  private readonly lanes = new Map<string, Lane>()

  /** Runs `call` in place `key`'s next turn. A `signal` that aborts while the turn is awaited
   *  skips the call (and rejects with the abort's reason). */
  async run<T>(key: string, intervalMs: number, call: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const lane = this.lanes.get(key) ?? { endedAt: Number.NEGATIVE_INFINITY, tail: Promise.resolve(), held: 0 }
    this.lanes.set(key, lane)
    const before = lane.tail
    let release!: () => void
    lane.tail = new Promise((resolve) => (release = resolve))
    lane.held++
    try {
      await before
      await until(lane.endedAt + intervalMs, signal)
      try {
        return await call()
      } finally {
        // A refused call reached the platform too: it counts.
        lane.endedAt = performance.now()
      }
    } finally {
      lane.held--
      release()
      this.forgetLater(key, lane, intervalMs)
    }
  }

  /** A lane nobody waits in is dropped once its pause is over (nothing is left to pace then). */
  private forgetLater(key: string, lane: Lane, intervalMs: number): void {
    if (lane.held > 0) return
    const timer = setTimeout(() => {
      if (lane.held > 0 || this.lanes.get(key) !== lane) return
      if (performance.now() < lane.endedAt + intervalMs) this.forgetLater(key, lane, intervalMs)
      else this.lanes.delete(key)
    }, intervalMs + 1)
    timer.unref()
  }
}
