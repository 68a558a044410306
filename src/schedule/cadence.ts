import type { CronSchedule } from "./cron.ts"

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

/** The due times of a cron expression (see parseCron for how it is read, DST included). */
export function cronCadence(schedule: CronSchedule): Cadence {
  return {
    nextAfterNow: () => schedule.next(new Date()),
    latest: (from, to) => schedule.latest(from, to),
  }
}
