import { join } from "node:path"
import { ConsoleChannel } from "../adapters/console/console.ts"
import { startApp, type App } from "./app.ts"
import { ConfigError, configOrExit, readEnvFile } from "./config/config.ts"
import { createLogger } from "./log/log.ts"
import { Memory } from "./memory/memory.ts"

readEnvFile()
const config = configOrExit()
const log = createLogger(config)

if (config.telegram.botToken || config.slack.botToken) {
  process.stderr.write("steward: TELEGRAM_BOT_TOKEN / SLACK_BOT_TOKEN are set, but the Slack and Telegram channels are not built yet; unset them to use the console\n")
  process.exit(2)
}

let app: App | undefined
let stopping = false
async function shutdown(code: number): Promise<void> {
  if (stopping) return
  stopping = true
  await app?.stop().catch((error) => log.error({ err: error }, "error while stopping"))
  await memory.close()
  log.flush()
  process.exit(code)
}

const memory = new Memory({ dir: join(config.dataDir, "memory"), scope: config.memoryScope })
// Piped input that ends means "done talking": finish the work in hand, deliver it, exit.
const consoleChannel = new ConsoleChannel(process.stdin, process.stdout, () => void app?.supervisor.idle().then(() => shutdown(0)))
process.on("SIGINT", () => void shutdown(0))
process.on("SIGTERM", () => void shutdown(0))
// Nothing a model or a user sends may take the process down; log it and go on.
process.on("unhandledRejection", (error) => log.error({ err: error }, "unhandled rejection"))

try {
  app = await startApp(config, log, [consoleChannel], memory)
  log.info({ dataDir: config.dataDir }, "Steward started (console channel)")
} catch (error) {
  process.stderr.write(`steward: ${error instanceof ConfigError ? "" : "could not start: "}${error instanceof Error ? error.message : error}\n`)
  process.exit(error instanceof ConfigError ? 2 : 1)
}
