import type { Command } from "commander"
import { ownerUsage } from "../owner/queries.ts"
import { utcDay } from "../quota/quota-guard.ts"
import type { UsageRow } from "../usage/usage.ts"
import { dataDirOf } from "../config/config.ts"
import { QUOTA_VARIABLES, quotasOf } from "../config/quotas.ts"
import { CliError, print, setting, table, withStore } from "./common.ts"

const share = (row: UsageRow) => (row.input === 0 ? "-" : `${Math.round(100 * row.cachedShare)}%`)

export function registerUsage(program: Command): void {
  program
    .command("usage")
    .description("model tokens per role and day (UTC), the share of input served from the prompt cache, and each user's use today against the QUOTA_* limits")
    .option("--days <n>", "today and the days before it", "7")
    .action(async (options: { days: string }, command: Command) => {
      const days = Number(options.days)
      if (!Number.isInteger(days) || days < 1 || days > 366) throw new CliError("--days is a whole number from 1 to 366", 2)
      const now = new Date()
      const today = utcDay(now.getTime())
      const { summary, samplesToday, triggers } = await withStore(async (store) => ({ summary: await ownerUsage(store, days, now), samplesToday: await store.owner.usageSince(today.start), triggers: await store.schedules.triggers() }))
      // After the store: a folder with no data is said to be one before any setting is needed.
      // Only the settings it reads: a history of model calls needs no MODEL to be set.
      const settings = { dataDir: dataDirOf(), memoryScope: setting("MEMORY_SCOPE"), quotas: quotaSettings() }
      const owners = setting("ALLOWED_USERS").users
      // Counting notes reads them with the memory's text libraries: loaded for this command only.
      const { againstLimit, quotaLimits, quotaUse } = await import("../quota/quota-usage.ts")
      const users = await quotaUse({ dataDir: settings.dataDir, memoryScope: settings.memoryScope, samplesToday: samplesToday.filter((sample) => sample.at.slice(0, 10) === today.day), triggers, isOwner: (user) => owners.has(user), now })
      const limits = quotaLimits(settings.quotas)
      const rows = [...summary.byDay, ...summary.byRole]
      const { quotas } = settings
      print(command, { ...summary, quotas: { limits, users } }, () =>
        (rows.length === 0
          ? `no model calls recorded in the last ${days} day${days === 1 ? "" : "s"}\n`
          : table(["day (UTC)", "role", "calls", "input", "cached", "output"], rows.map((row) => [row.day, row.role, String(row.calls), String(row.input), `${row.cachedInput} (${share(row)})`, String(row.output)]))) +
        `\nToday (${today.day}, UTC) per user against the quotas (owners are not limited; messages: ${quotas.messagesPerMinute} a minute, notes: ${quotas.memoryNoteChars} characters each, recurring schedules: every ${quotas.minIntervalSeconds} s at most):\n` +
        (users.length === 0
          ? "no user has used a model today or has a schedule\n"
          : table(
              ["user", "tokens", "recurring schedules", "notes", "uploads"],
              users.map((use) => [
                use.owner ? `${use.user} (owner)` : use.user,
                againstLimit(use.tokensToday, quotas.tokensPerDay, use.owner),
                againstLimit(use.recurringSchedules, quotas.schedules, use.owner),
                againstLimit(use.notesToday, quotas.memoryNotesPerDay, use.owner),
                againstLimit(use.uploadsToday, quotas.uploadsPerDay, use.owner),
              ]),
            )),
      )
    })
}

/** QUOTA_* as start-up reads them, each refused (exit 2) as start-up would. */
function quotaSettings() {
  const names = Object.keys(QUOTA_VARIABLES) as Array<keyof typeof QUOTA_VARIABLES>
  return quotasOf(Object.fromEntries(names.map((name) => [name, setting(name)])) as Parameters<typeof quotasOf>[0])
}
