import type { Command } from "commander"
import type { UsageSample } from "../store/records.ts"
import { CliError, print, table, withStore } from "./common.ts"

export interface UsageRow {
  day: string
  role: string
  calls: number
  input: number
  cachedInput: number
  output: number
}

function localDay(iso: string): string {
  const d = new Date(iso)
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`
}

/** Sums samples per day and role; `day: "total"` rows sum each role over the whole span. */
export function summarise(samples: UsageSample[]): UsageRow[] {
  const rows = new Map<string, UsageRow>()
  const add = (day: string, sample: UsageSample) => {
    const key = `${day}\u0000${sample.role}`
    const row = rows.get(key) ?? { day, role: sample.role, calls: 0, input: 0, cachedInput: 0, output: 0 }
    row.calls++
    row.input += sample.input
    row.cachedInput += sample.cachedInput
    row.output += sample.output
    rows.set(key, row)
  }
  for (const sample of samples) {
    add(localDay(sample.at), sample)
    add("total", sample)
  }
  return [...rows.values()].sort((a, b) => (a.day === b.day ? a.role.localeCompare(b.role) : a.day === "total" ? 1 : b.day === "total" ? -1 : a.day.localeCompare(b.day)))
}

const share = (row: UsageRow) => (row.input === 0 ? "-" : `${Math.round((100 * row.cachedInput) / row.input)}%`)

export function registerUsage(program: Command): void {
  program
    .command("usage")
    .description("model tokens per role and day, and the share of input served from the prompt cache")
    .option("--days <n>", "today and the days before it", "7")
    .action(async (options: { days: string }, command: Command) => {
      const days = Number(options.days)
      if (!Number.isInteger(days) || days < 1 || days > 366) throw new CliError("--days is a whole number from 1 to 366", 2)
      const now = new Date()
      const since = new Date(now.getFullYear(), now.getMonth(), now.getDate() - (days - 1)).getTime()
      const rows = summarise(await withStore((store) => store.usageSince(since)))
      print(command, rows.map((row) => ({ ...row, cachedShare: row.input === 0 ? null : row.cachedInput / row.input })), () =>
        rows.length === 0
          ? `no model calls recorded in the last ${days} day${days === 1 ? "" : "s"}\n`
          : table(["day", "role", "calls", "input", "cached", "output"], rows.map((row) => [row.day, row.role, String(row.calls), String(row.input), `${row.cachedInput} (${share(row)})`, String(row.output)])),
      )
    })
}
