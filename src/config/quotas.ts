import { wholeNumber } from "./fields.ts"

/** Per-user limits for every user but the owners (ALLOWED_USERS). */
export interface Quotas {
  /** Active recurring schedules a user may have. */
  schedules: number
  /** The shortest time between two runs of a user's recurring schedule (interval or cron). */
  minIntervalSeconds: number
  /** Characters of one remembered note. */
  memoryNoteChars: number
  /** Notes a user's agents may remember in a day. */
  memoryNotesPerDay: number
  /** Files a user may send in a day. */
  uploadsPerDay: number
  /** Model tokens (input and output, every role working for the user) a user may use in a day (UTC). */
  tokensPerDay: number
  /** Messages a user may send in a minute; the rest are not taken, and the sender is told once. */
  messagesPerMinute: number
}

/** The QUOTA_* variables, each with its safe default; part of the configuration's schema. */
export const QUOTA_VARIABLES = {
  QUOTA_SCHEDULES: wholeNumber(0, 10_000).default(10),
  // 15 minutes: one schedule step can no longer create dozens of minute-by-minute jobs.
  QUOTA_MIN_INTERVAL_SECONDS: wholeNumber(60, 31_536_000).default(900),
  QUOTA_MEMORY_NOTE_CHARS: wholeNumber(1, 20_000).default(2000),
  QUOTA_MEMORY_NOTES_PER_DAY: wholeNumber(0, 1_000_000).default(50),
  QUOTA_UPLOADS_PER_DAY: wholeNumber(0, 1_000_000).default(50),
  QUOTA_TOKENS_PER_DAY: wholeNumber(0, 1_000_000_000_000).default(2_000_000),
  QUOTA_MESSAGES_PER_MINUTE: wholeNumber(1, 10_000).default(20),
}

type QuotaVars = { [K in keyof typeof QUOTA_VARIABLES]: number }

export function quotasOf(vars: QuotaVars): Quotas {
  return {
    schedules: vars.QUOTA_SCHEDULES,
    minIntervalSeconds: vars.QUOTA_MIN_INTERVAL_SECONDS,
    memoryNoteChars: vars.QUOTA_MEMORY_NOTE_CHARS,
    memoryNotesPerDay: vars.QUOTA_MEMORY_NOTES_PER_DAY,
    uploadsPerDay: vars.QUOTA_UPLOADS_PER_DAY,
    tokensPerDay: vars.QUOTA_TOKENS_PER_DAY,
    messagesPerMinute: vars.QUOTA_MESSAGES_PER_MINUTE,
  }
}
