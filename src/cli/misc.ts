import type { Command } from "commander"
import { EVENT_NAME } from "../schedule/condition.ts"
import { cronPreview } from "../schedule/cron-preview.ts"
import { raiseEvent } from "../schedule/events.ts"
import { stewardVersion } from "../version/version.ts"
import { CliError, print, withStore } from "./common.ts"

export function registerMisc(program: Command): void {
  program
    .command("version")
    .description("the version of Steward")
    .action((_options: unknown, command: Command) => print(command, { version: stewardVersion() }, () => `${stewardVersion()}\n`))

  program
    .command("event <name>")
    .description("raise an event for conditional tasks and schedules (the running Steward sees it within a second)")
    .action(async (name: string, _options: unknown, command: Command) => {
      if (!EVENT_NAME.test(name)) throw new CliError("an event name is 1-64 letters, digits, _ . -", 2)
      const raised = await withStore((store) => raiseEvent(store, name), { create: true })
      print(command, raised, () => `raised ${name}\n`)
    })

  program
    .command("cron <expression...>")
    .description('show the next runs of a cron expression, read as a schedule reads it (quote it: "30 2 * * *")')
    .option("--tz <zone>", "the IANA time zone it is read in (default: this machine's)")
    .option("--count <n>", "how many runs to show (1-100)", "5")
    .action((words: string[], options: { tz?: string; count: string }, command: Command) => {
      const preview = cronPreview([...words, ...(options.tz ? ["--tz", options.tz] : []), "--count", options.count])
      if ("error" in preview) throw new CliError(preview.error, 2)
      print(command, preview.data, () => preview.text)
    })
}
