import type { Role, UserId } from "../core/types.ts"

/** One model call's token usage, as the agent loop reports it. */
export interface UsageSample {
  /** ISO time of the call's end. */
  at: string
  /** The role that made the call; "compaction" for the call that summarises a session. */
  role: Role | "compaction"
  /** "teller", "planner" or the worker type. */
  agent: string
  conversation: string
  sessionId: string
  /** Whose turn or task made the call (`telegram:1001`), for quotas and usage per user; absent in
   *  samples recorded before either. */
  user?: UserId
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

/** Tokens of one user or one model over the whole period. */
export interface UsageTotal {
  name: string
  calls: number
  input: number
  cachedInput: number
  output: number
}

export interface UsageSummary {
  /** One row per day and role, oldest day first, roles in a fixed order. */
  byDay: UsageRow[]
  /** One row per role over the whole period. */
  byRole: UsageRow[]
  /** Every day of the period, oldest first, with its tokens (0 on a day without calls): the chart. */
  perDay: Array<{ day: string; calls: number; input: number; output: number }>
  /** Per user (the conversation where older samples name none), most tokens first. */
  byUser: UsageTotal[]
  /** Per model (`<provider>:<model-id>`), most tokens first. */
  byModel: UsageTotal[]
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
  const perDay = new Map<string, UsageSummary["perDay"][number]>()
  for (let at = Date.parse(`${first}T00:00:00Z`); at <= now.getTime(); at += DAY_MS) {
    const day = new Date(at).toISOString().slice(0, 10)
    perDay.set(day, { day, calls: 0, input: 0, output: 0 })
  }
  const byUser = new Map<string, UsageTotal>()
  const byModel = new Map<string, UsageTotal>()
  for (const sample of samples) {
    const day = sample.at.slice(0, 10)
    if (day < first || Number.isNaN(Date.parse(sample.at))) continue
    add(byDay, `${day} ${sample.role}`, day, sample)
    add(byRole, sample.role, "all", sample)
    const total = perDay.get(day)
    if (total) {
      total.calls++
      total.input += sample.input
      total.output += sample.output
    }
    addTotal(byUser, sample.user ?? sample.conversation, sample)
    addTotal(byModel, sample.model, sample)
  }
  const order = (a: UsageRow, b: UsageRow) => a.day.localeCompare(b.day) || ROLE_ORDER.indexOf(a.role) - ROLE_ORDER.indexOf(b.role)
  const most = (a: UsageTotal, b: UsageTotal) => b.input + b.output - (a.input + a.output) || a.name.localeCompare(b.name)
  return {
    byDay: [...byDay.values()].map(withShare).sort(order),
    byRole: [...byRole.values()].map(withShare).sort(order),
    perDay: [...perDay.values()],
    byUser: [...byUser.values()].sort(most),
    byModel: [...byModel.values()].sort(most),
  }
}

function addTotal(totals: Map<string, UsageTotal>, name: string, sample: UsageSample): void {
  const total = totals.get(name) ?? { name, calls: 0, input: 0, cachedInput: 0, output: 0 }
  total.calls++
  total.input += sample.input
  total.cachedInput += sample.cachedInput
  total.output += sample.output
  totals.set(name, total)
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
