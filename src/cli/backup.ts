import { existsSync, statSync } from "node:fs"
import { resolve } from "node:path"
import type { Command } from "commander"
import { CliError, print, withStore } from "./common.ts"

export function registerBackup(program: Command): void {
  program
    .command("backup <file>")
    .description("copy the whole store to a new SQLite file, consistent even while Steward runs (restore: stop Steward, put it in DATA_DIR as steward.sqlite)")
    .action(async (file: string, _options: unknown, command: Command) => {
      const target = resolve(file)
      if (existsSync(target)) throw new CliError(`${target} exists; give a new file`)
      await withStore((store) => store.backup(target)).catch((error: unknown) => {
        throw error instanceof CliError ? error : new CliError(`could not write ${target}: ${error instanceof Error ? error.message : error}`)
      })
      const bytes = statSync(target).size
      print(command, { file: target, bytes }, () => `backed up to ${target} (${bytes} bytes)\n`)
    })
}
