import { join } from "node:path"
import { ConsoleChannel } from "../adapters/console/console.ts"
import { SlackChannel } from "../adapters/slack/slack.ts"
import { TelegramChannel } from "../adapters/telegram/telegram.ts"
import type { Channel } from "./channel/channel.ts"
import { startApp, type App } from "./app.ts"
import { ConfigError, configOrExit } from "./config/config.ts"
import { createLogger } from "./log/log.ts"
import { embedderFor } from "./memory/embedder.ts"
import { Memory } from "./memory/memory.ts"

const config = configOrExit(process.env, ".env")
const log = createLogger(config)

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

const memory = new Memory({
  dir: join(config.dataDir, "memory"),
  scope: config.memoryScope,
  // A failed background rebuild: the previous index (or the brute-force stand-in) keeps serving.
  onError: (error) => log.error({ err: error }, "memory: background index rebuild failed"),
  // With EMBEDDING_MODEL, hybrid search; a failed or slow embedding falls back to lexical.
  embedder: embedderFor(config),
  onWarning: (message) => log.warn(message),
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
  const started = channels()
  app = await startApp(config, log, started, memory)
  log.info({ dataDir: config.dataDir, channels: started.map((channel) => channel.name) }, "Steward started")
  // Notes written or changed while Steward was down (or under another model) are embedded in the background.
  void memory.embedAll().catch((error) => log.warn({ err: error }, "memory: could not list the memory folders to embed"))
} catch (error) {
  process.stderr.write(`steward: ${error instanceof ConfigError ? "" : "could not start: "}${error instanceof Error ? error.message : error}\n`)
  process.exit(error instanceof ConfigError ? 2 : 1)
}
