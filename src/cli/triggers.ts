import type { Command } from "commander"
import { cadence, ownerTriggers } from "../owner/queries.ts"
import { clip, print, resolveId, table, when, withStore } from "./common.ts"
import { requestControl } from "./control.ts"

export function registerTriggers(program: Command): void {
  program
    .command("triggers")
    .description("list schedules: active and paused ones (--all: ended too)")
    .option("--all", "include ended and cancelled schedules")
    .action(async (options: { all?: boolean }, command: Command) => {
      const triggers = await withStore((store) => ownerTriggers(store, options))
      print(command, triggers, () =>
        triggers.length === 0
          ? "no schedules\n"
          : table(
              ["id", "state", "kind", "when", "next", "user", "prompt"],
              triggers.map((t) => [t.id, t.status, t.kind, clip(cadence(t, when), 40), when(t.nextRunAt), t.user, clip(t.prompt, 50)]),
            ),
      )
    })

  const trigger = program.command("trigger").description("pause, resume or remove a schedule (the running Steward applies it)")
  const actions = { pause: "stop its runs until resumed", resume: "let it run again", remove: "end it for good" } as const
  for (const [action, description] of Object.entries(actions) as Array<[keyof typeof actions, string]>) {
    trigger
      .command(`${action} <id>`)
      .description(`${description} (<id>: a unique prefix of at least 4 characters)`)
      .action(async (prefix: string, _options: unknown, command: Command) => {
        const outcome = await withStore(async (store) => {
          const id = resolveId((await store.schedules.triggers()).map((t) => t.id), prefix, "trigger")
          return { id, result: await requestControl(store, `trigger.${action}`, id) }
        })
        print(command, outcome, () => `${outcome.result}\n`)
      })
  }
}
