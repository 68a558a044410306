import { Command, CommanderError } from "commander"
import { registerBackup } from "./backup.ts"
import { CliError } from "./common.ts"
import { registerDoctor } from "./doctor.ts"
import { registerMemory } from "./memory.ts"
import { registerMisc } from "./misc.ts"
import { stewardVersion } from "../version/version.ts"
import { registerSetup } from "./setup.ts"
import { registerStatus } from "./status.ts"
import { registerTasks } from "./tasks.ts"
import { registerTriggers } from "./triggers.ts"
import { registerUsage } from "./usage.ts"
import { registerUsers } from "./users.ts"

/** The owner CLI: every command, `--help` on each, `--json` for scripts. */
export function cliProgram(): Command {
  const program = new Command("steward")
    .description("Steward's owner commands. They work beside a running Steward on the same DATA_DIR.")
    .version(stewardVersion(), "-V, --version", "the version of Steward")
    .option("--json", "print JSON for scripts instead of tables")
    // A mistake in the command line is one line, like every other error, not the whole help.
    .configureOutput({ outputError: (text, write) => write(`${text.trim().replace(/^error: /, "steward: ")} (see --help)\n`) })
    .exitOverride()
  registerStatus(program)
  registerDoctor(program)
  registerTasks(program)
  registerTriggers(program)
  registerUsers(program)
  registerMemory(program)
  registerUsage(program)
  registerBackup(program)
  registerMisc(program)
  registerSetup(program)
  for (const command of program.commands) command.exitOverride()
  return program
}

/** Runs one command line; returns the exit code: 0, 1 when the command failed, 2 for a usage
 *  or configuration mistake. */
export async function runCli(args: string[]): Promise<number> {
  const program = cliProgram()
  if (args.length === 0) {
    process.stderr.write(program.helpInformation())
    return 2
  }
  try {
    await program.parseAsync(args, { from: "user" })
    return Number(process.exitCode ?? 0)
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version were asked for; anything else commander refuses is a usage mistake.
      return error.code === "commander.helpDisplayed" || error.code === "commander.version" || error.code === "commander.help" ? 0 : 2
    }
    if (error instanceof CliError) {
      process.stderr.write(`steward: ${error.message}\n`)
      return error.exitCode
    }
    // Whatever else failed: one line, never a stack trace (NODE_DEBUG=steward shows it).
    process.stderr.write(`steward: ${error instanceof Error ? error.message : String(error)}\n`)
    if (process.env.NODE_DEBUG?.includes("steward")) process.stderr.write(`${error instanceof Error ? error.stack : ""}\n`)
    return 1
  }
}
