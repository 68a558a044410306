import type { Progress } from "@modelcontextprotocol/sdk/types.js"

/** The most often a call's progress changes its status: each change goes to the chat (and, in a
 *  cluster, through the store), and a server may report hundreds of times a second. */
export const PROGRESS_INTERVAL_MS = 1_000

/**
 * A call's progress reports, paced: the first at once, then at most one per interval — the
 * newest, so the status never lags behind for long. `stop` drops one still waiting, so nothing
 * is shown after the call ended.
 */
export function pacedProgress(show: (text: string) => void, intervalMs = PROGRESS_INTERVAL_MS): { report(progress: Progress): void; stop(): void } {
  let shownAt = Number.NEGATIVE_INFINITY
  let pending: string | undefined
  let timer: NodeJS.Timeout | undefined
  const flush = () => {
    timer = undefined
    shownAt = Date.now()
    if (pending !== undefined) show(pending)
    pending = undefined
  }
  return {
    report(progress) {
      pending = progressText(progress)
      if (timer) return
      const wait = shownAt + intervalMs - Date.now()
      if (wait <= 0) return flush()
      timer = setTimeout(flush, wait)
    },
    stop() {
      clearTimeout(timer)
      timer = undefined
      pending = undefined
    },
  }
}

/** "3/10" with a total, "40%" when the total is 1 or 100 or either number is a fraction, else
 *  the count; the server's message after it. */
export function progressText({ progress, total, message }: Progress): string {
  const fractional = !Number.isInteger(progress) || (total !== undefined && !Number.isInteger(total))
  const amount =
    total !== undefined && total > 0
      ? total === 1 || total === 100 || fractional
        ? `${Math.round((progress / total) * 100)}%`
        : `${progress}/${total}`
      : `${Number(progress.toFixed(2))}`
  const note = message?.trim().slice(0, 200)
  return note ? `${amount} ${note}` : amount
}
