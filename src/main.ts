import { join } from "node:path"
import { ConsoleChannel } from "../adapters/console/console.ts"
import { SlackChannel } from "../adapters/slack/slack.ts"
import { TelegramChannel } from "../adapters/telegram/telegram.ts"
import type { Channel } from "./channel/channel.ts"
import { startApp, type App } from "./app.ts"
import { ConfigError, configOrExit } from "./config/config.ts"
import { lockDataDir, type DataDirLock } from "./lock/data-dir-lock.ts"
import { createLogger, type LoggedError } from "./log/log.ts"
import { checkModels } from "./model/model-check.ts"
import { Memory } from "./memory/memory.ts"
import { NewerDataError } from "./store/migrations.ts"

const config = configOrExit(process.env, ".env")
/** Errors are kept in the store for `steward status` once it is open (earlier ones end start-up). */
let keepError: ((entry: LoggedError) => void) | undefined
const log = createLogger(config, (entry) => keepError?.(entry))

let app: App | undefined
let lock: DataDirLock | undefined
let stopping = false
async function shutdown(code: number): Promise<void> {
  if (stopping) return
  stopping = true
  await app?.stop().catch((error) => log.error({ err: error }, "error while stopping"))
  await memory.close()
  await lock?.release().catch((error) => log.error({ err: error }, "could not release the data folder lock"))
  log.flush()
  process.exit(code)
}

const memory = new Memory({
  dir: join(config.dataDir, "memory"),
  scope: config.memoryScope,
  // A failed background rebuild: the previous index (or the brute-force stand-in) keeps serving.
  onError: (error) => log.error({ err: error }, "memory: background index rebuild failed"),
})

/** Slack and Telegram when their tokens are set (both may run in one process); else the console. */
function channels(): Channel[] {
  const { telegram, slack } = config
  const chat: Channel[] = []
  if (telegram.botToken) chat.push(new TelegramChannel({ ...telegram, botToken: telegram.botToken }, log.child({ channel: "telegram" })))
  if (slack.botToken) chat.push(new SlackChannel({ ...slack, botToken: slack.botToken }, log.child({ channel: "slack" })))
  if (chat.length > 0) return chat
  // Piped input that ends means "done talking": finish the work in hand, deliver it, exit.
  return [new ConsoleChannel(process.stdin, process.stdout, () => void app?.supervisor.idle().then(() => shutdown(0)))]
}
process.on("SIGINT", () => void shutdown(0))
process.on("SIGTERM", () => void shutdown(0))
// Nothing a model or a user sends may take the process down; log it and go on.
process.on("unhandledRejection", (error) => log.error({ err: error }, "unhandled rejection"))

try {
  // Before anything touches the data folder: a second copy on it would run the same work twice.
  lock = await lockDataDir(config.dataDir, (error) => log.error({ err: error }, "lost the data folder lock: another Steward may start on it"))
  const started = channels()
  app = await startApp(config, log, started, memory)
  const { store } = app
  // A failed write of an error is not logged again: that could only repeat itself.
  keepError = (entry) => void store.recordError(entry).catch(() => {})
  // The same check as `steward doctor`, in the background: a bad key or model id is named now,
  // not at the first message.
  void checkModels(config).then((checks) => {
    for (const check of checks) if (!check.ok) log.warn({ check }, `${check.name}: ${check.detail} (fix: ${check.fix})`)
  })
  log.info({ dataDir: config.dataDir, channels: started.map((channel) => channel.name) }, "Steward started")
} catch (error) {
  // A configuration mistake or data this version cannot read: one line and exit 2, like a bad variable.
  const refused = error instanceof ConfigError || error instanceof NewerDataError
  process.stderr.write(`steward: ${refused ? "" : "could not start: "}${error instanceof Error ? error.message : error}\n`)
  process.exit(refused ? 2 : 1)
}
