import type { Command } from "commander"
import { print } from "./common.ts"

export function registerDoctor(program: Command): void {
  program
    .command("doctor")
    .description("check the configuration, the data folder, each model, each channel's token and the MCP servers; one line per check with a fix")
    .action(async (_options: unknown, command: Command) => {
      // Loaded here: the model and MCP libraries it needs would slow every other command.
      const { runDoctor } = await import("../doctor/doctor.ts")
      const checks = await runDoctor()
      print(command, checks, () => checks.map((check) => `${check.ok ? "ok  " : "FAIL"}  ${check.name}: ${check.detail}${check.fix ? `\n      fix: ${check.fix}` : ""}\n`).join(""))
      if (checks.some((check) => !check.ok)) process.exitCode = 1
    })
}
