import type { Role } from "../core/types.ts"

/** One model call's token usage, as the agent loop reports it. */
export interface UsageSample {
  /** ISO time of the call's end. */
  at: string
  /** The role that made the call; "compaction" for the call that summarises a session. */
  role: Role | "compaction"
  /** "teller", "planner" or the worker type. */
  agent: string
  conversation: string
  /** The user the call worked for (absent in samples recorded before quotas). */
  user?: string
  sessionId: string
  taskId?: string
  /** `<provider>:<model-id>` as the AI SDK names it. */
  model: string
  /** Input tokens of the call, cached ones included. */
  input: number
  /** Input tokens the provider served from its prompt cache. */
  cachedInput: number
  output: number
}

export interface UsageRow {
  /** YYYY-MM-DD (UTC); "all" in the per-role totals. */
  day: string
  role: UsageSample["role"]
  calls: number
  input: number
  cachedInput: number
  output: number
  /** cachedInput / input; 0 when there was no input. */
  cachedShare: number
}

export interface UsageSummary {
  /** One row per day and role, oldest day first, roles in a fixed order. */
  byDay: UsageRow[]
  /** One row per role over the whole period. */
  byRole: UsageRow[]
}

const ROLE_ORDER: ReadonlyArray<UsageSample["role"]> = ["teller", "planner", "worker", "compaction"]
const DAY_MS = 86_400_000

/**
 * Sums samples per day and role over the last `days` days (today included, by UTC date), for
 * `steward usage`. Pure: the caller reads the samples and prints the rows.
 */
export function summariseUsage(samples: Iterable<UsageSample>, options: { days: number; now?: Date }): UsageSummary {
  const now = options.now ?? new Date()
  const first = new Date(now.getTime() - (Math.max(1, options.days) - 1) * DAY_MS).toISOString().slice(0, 10)
  const byDay = new Map<string, UsageRow>()
  const byRole = new Map<string, UsageRow>()
  for (const sample of samples) {
    const day = sample.at.slice(0, 10)
    if (day < first || Number.isNaN(Date.parse(sample.at))) continue
    add(byDay, `${day} ${sample.role}`, day, sample)
    add(byRole, sample.role, "all", sample)
  }
  const order = (a: UsageRow, b: UsageRow) => a.day.localeCompare(b.day) || ROLE_ORDER.indexOf(a.role) - ROLE_ORDER.indexOf(b.role)
  return { byDay: [...byDay.values()].map(withShare).sort(order), byRole: [...byRole.values()].map(withShare).sort(order) }
}

function add(rows: Map<string, UsageRow>, key: string, day: string, sample: UsageSample): void {
  const row = rows.get(key) ?? { day, role: sample.role, calls: 0, input: 0, cachedInput: 0, output: 0, cachedShare: 0 }
  row.calls++
  row.input += sample.input
  row.cachedInput += sample.cachedInput
  row.output += sample.output
  rows.set(key, row)
}

function withShare(row: UsageRow): UsageRow {
  return { ...row, cachedShare: row.input === 0 ? 0 : row.cachedInput / row.input }
}
