/**
 * Fair turns on the event loop. Runs that become ready together — every run whose write one
 * group commit settled, every answer that arrived in one poll — would otherwise each go straight
 * on to their next model step inside the same macrotask, and the loop would serve no timer, no
 * stream edit and no socket until all of them were done (the soak's stalls). Each caller of
 * `nextTurn` goes on in a macrotask of its own, one per turn of the loop, in the order they came.
 */
const waiting: Array<() => void> = []

function releaseOne(): void {
  waiting.shift()?.()
  // An immediate queued from inside an immediate runs on the next turn of the loop: timers and
  // I/O are served between any two released callers.
  if (waiting.length > 0) setImmediate(releaseOne)
}

/** Resolves once every caller before it has had its turn, each on a turn of the loop of its own. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve)
    if (waiting.length === 1) setImmediate(releaseOne)
  })
}
