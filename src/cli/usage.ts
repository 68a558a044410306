import type { Command } from "commander"
import { ownerUsage } from "../owner/queries.ts"
import type { UsageRow } from "../usage/usage.ts"
import { CliError, print, table, withStore } from "./common.ts"

const share = (row: UsageRow) => (row.input === 0 ? "-" : `${Math.round(100 * row.cachedShare)}%`)

export function registerUsage(program: Command): void {
  program
    .command("usage")
    .description("model tokens per role and day (UTC), and the share of input served from the prompt cache")
    .option("--days <n>", "today and the days before it", "7")
    .action(async (options: { days: string }, command: Command) => {
      const days = Number(options.days)
      if (!Number.isInteger(days) || days < 1 || days > 366) throw new CliError("--days is a whole number from 1 to 366", 2)
      const summary = await withStore((store) => ownerUsage(store, days))
      const rows = [...summary.byDay, ...summary.byRole]
      print(command, summary, () =>
        rows.length === 0
          ? `no model calls recorded in the last ${days} day${days === 1 ? "" : "s"}\n`
          : table(["day", "role", "calls", "input", "cached", "output"], rows.map((row) => [row.day, row.role, String(row.calls), String(row.input), `${row.cachedInput} (${share(row)})`, String(row.output)])),
      )
    })
}
