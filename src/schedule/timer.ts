/** setTimeout's longest delay; a later time is reached in steps. */
const MAX_DELAY_MS = 2 ** 31 - 1

/** Calls `fire` at `at` (at once if it has passed). Returns what cancels it. */
export function timerAt(at: Date, fire: () => void): () => void {
  let handle: NodeJS.Timeout
  const wait = () => {
    const delay = at.getTime() - Date.now()
    handle = delay > MAX_DELAY_MS ? setTimeout(wait, MAX_DELAY_MS) : setTimeout(fire, Math.max(0, delay))
  }
  wait()
  return () => clearTimeout(handle)
}

/** The earliest of some times, if any. */
export function earliest(times: Iterable<Date | undefined>): Date | undefined {
  let first: Date | undefined
  for (const at of times) if (at && (!first || at < first)) first = at
  return first
}
