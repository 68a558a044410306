#!/usr/bin/env node
import { orExit, readEnvFile } from "./config/config.ts"
import { runCli } from "./cli/program.ts"
import { PRIVATE_UMASK } from "./data-dir/private.ts"

/**
 * Owner commands beside the running server: `npm run steward -- <command>` (`steward help`
 * lists them). They use the same SQLite file (WAL lets both processes in); what the server
 * holds in memory it picks up by itself (raised events, owner controls).
 */
orExit(readEnvFile)
// Backups, exports and a store the CLI creates are the owner's alone, like the server's files.
process.umask(PRIVATE_UMASK)
process.exitCode = await runCli(process.argv.slice(2))
