import cron, { type ScheduledTask } from "node-cron"

/** Where a trigger's due times fall. */
export interface Cadence {
  /** The first due time after the current time; undefined when there is none left. */
  nextAfterNow(): Date | undefined
  /** The latest due time in [from, to], if any. */
  latest(from: Date, to: Date): Date | undefined
}

/** Every `seconds`, counted from `anchor` (the trigger's creation): exact for any interval
 *  (90 minutes, 36 hours), unlike a cron expression, which can only express intervals that
 *  divide an hour or a day and would move the phase to the top of the hour. */
export function intervalCadence(anchor: Date, seconds: number): Cadence {
  const step = seconds * 1000
  const start = anchor.getTime()
  return {
    nextAfterNow() {
      const now = Date.now()
      return new Date(now < start ? start : start + (Math.floor((now - start) / step) + 1) * step)
    },
    latest(from, to) {
      if (to.getTime() < start) return undefined
      const last = start + Math.floor((to.getTime() - start) / step) * step
      return last >= from.getTime() ? new Date(last) : undefined
    },
  }
}

/** Once, at `at`. */
export function onceCadence(at: Date): Cadence {
  return {
    nextAfterNow: () => (at.getTime() > Date.now() ? at : undefined),
    latest: (from, to) => (at >= from && at <= to ? at : undefined),
  }
}

/**
 * The due times of a node-cron task, in its time zone. node-cron can only look forward from the
 * current time (getNextRuns), so the latest past due time is searched backwards with match(),
 * checking only the seconds the expression allows: bounded by the caller's window (a trigger's
 * maxLateness, at most a day), that is at most 1,440 checks for a 5-field expression.
 *
 * Across DST changes node-cron reads the expression in wall-clock time: "0 9 * * *" in
 * Europe/Berlin is 08:00Z in winter and 07:00Z in summer. A wall-clock time that does not exist
 * (02:30 on the last Sunday of March) does not fire that day at all; one that exists twice
 * (02:30 on the last Sunday of October) fires once, at the second (CET) occurrence.
 */
export function cronCadence(task: ScheduledTask): Cadence {
  const seconds = [...cron.parse(task.getPattern()).second].sort((a, b) => b - a)
  return {
    nextAfterNow: () => task.getNextRuns(1)[0],
    latest(from, to) {
      for (let minute = Math.floor(to.getTime() / 60_000) * 60_000; minute > from.getTime() - 60_000; minute -= 60_000) {
        for (const second of seconds) {
          const at = new Date(minute + second * 1000)
          if (at >= from && at <= to && task.match(at)) return at
        }
      }
      return undefined
    },
  }
}
