#!/usr/bin/env node
import { approvePairing } from "./access/access.ts"
import { dataDirOf, orExit, readEnvFile } from "./config/config.ts"
import { EVENT_NAME } from "./schedule/condition.ts"
import { CRON_USAGE, cronPreview } from "./schedule/cron-preview.ts"
import { raiseEvent } from "./schedule/events.ts"
import { NewerDataError } from "./store/migrations.ts"
import { Store } from "./store/store.ts"

/**
 * Owner commands beside the running server: `npm run steward -- <command>`. They write to the
 * same SQLite file (WAL lets both processes in); the server picks the change up by itself.
 */
const USAGE = `usage: npm run steward -- <command>
  pairing approve <code>   let the user who was given <code> talk to Steward
  pairing list             show pairing codes waiting for approval
  event <name>             raise an event for conditional tasks and schedules
  ${CRON_USAGE}`

async function main(args: string[]): Promise<number> {
  orExit(readEnvFile)
  const [command, sub, value] = args
  if (command === "cron") {
    const preview = cronPreview(args.slice(1))
    if ("error" in preview) process.stderr.write(`steward: ${preview.error}\n`)
    else process.stdout.write(preview.text)
    return "error" in preview ? 2 : 0
  }
  const known = (command === "pairing" && (sub === "list" || (sub === "approve" && value))) || (command === "event" && sub && !value)
  if (!known) {
    process.stderr.write(`${USAGE}\n`)
    return 2
  }
  if (command === "event" && !EVENT_NAME.test(sub!)) {
    process.stderr.write("steward: an event name is 1-64 letters, digits, _ . -\n")
    return 2
  }
  const store = await Store.open(dataDirOf()).catch((error: unknown) => {
    if (!(error instanceof NewerDataError)) throw error
    process.stderr.write(`steward: ${error.message}\n`)
    return undefined
  })
  if (!store) return 2
  try {
    if (command === "event") {
      // The running server picks it up within a second (Scheduler's poll).
      await raiseEvent(store, sub!)
      process.stdout.write(`raised ${sub}\n`)
      return 0
    }
    if (sub === "list") {
      const pending = (await store.pairings()).filter((p) => Date.parse(p.expiresAt) > Date.now())
      process.stdout.write(pending.length === 0 ? "no pairing requests\n" : pending.map((p) => `${p.code}  ${p.user}  until ${p.expiresAt}\n`).join(""))
      return 0
    }
    const result = await approvePairing(store, value!)
    if ("error" in result) {
      process.stderr.write(`steward: ${result.error}\n`)
      return 1
    }
    process.stdout.write(`approved ${result.user}\n`)
    return 0
  } finally {
    await store.close()
  }
}

process.exitCode = await main(process.argv.slice(2))
