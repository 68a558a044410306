import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import type { Channel } from "./channel/channel.ts"
import type { App } from "./app.ts"
import { configOrExit, type Config } from "./config/config.ts"
import { ensureDataDir } from "./config/data-dir.ts"
import { refusal } from "./config/refusal.ts"
import { privateDataDir } from "./data-dir/private.ts"
import { lockDataDir, type DataDirLock } from "./lock/data-dir-lock.ts"
import { createLogger, type LoggedError } from "./log/log.ts"
import { redactor, secretsOf } from "./log/redact.ts"

const config = configOrExit(process.env, ".env")
const redact = redactor(secretsOf(config))

/** A start-up failure: one line (no secret in it), exit 2 for what a restart cannot fix (the
 *  systemd unit does not restart it), 1 for what may pass. Never a stack trace. */
function failStart(error: unknown): never {
  const refused = refusal(error)
  process.stderr.write(redact(`steward: ${refused ?? `could not start: ${error instanceof Error ? error.message : error}`}\n`))
  process.exit(refused ? 2 : 1)
}

// Before anything is written into it, the log file included: a folder this user can write, and
// what Steward keeps there is its user's alone.
await ensureDataDir(config.dataDir).catch(failStart)
let looseDataDir: string | undefined
try {
  looseDataDir = privateDataDir(config.dataDir)
} catch (error) {
  failStart(error)
}
// The program proper is loaded once the settings and the data folder are known to be good: a
// refused setting is told without first loading every library (a second, on a busy machine more).
const [{ startAdmin }, { Metrics }, { startApp }, { checkModels }, { embedderFor }, { Memory }] = await Promise.all([
  import("./admin/admin.ts"),
  import("./admin/metrics.ts"),
  import("./app.ts"),
  import("./model/model-check.ts"),
  import("./memory/embedder.ts"),
  import("./memory/memory.ts"),
])
const chatTokens = Boolean(config.telegram.botToken || config.slack.botToken)
// In a terminal the console chat owns the screen: logs go to a file unless LOG_FILE says where.
const interactive = !chatTokens && Boolean(process.stdin.isTTY && process.stdout.isTTY)
const logFile = config.logFile ?? (interactive ? join(config.dataDir, "steward.log") : undefined)
/** Errors are kept in the store for `steward status` once it is open (earlier ones end start-up). */
let keepError: ((entry: LoggedError) => void) | undefined
const log = await createLogger({ ...config, logFile }, (entry) => keepError?.(entry), { pretty: Boolean(process.stderr.isTTY) })
/** What the owner must see although the logs go to a file: on the terminal too. */
function tell(line: string): void {
  if (logFile && process.stderr.isTTY) process.stderr.write(`steward: ${line}\n`)
}
if (looseDataDir) {
  log.warn(looseDataDir)
  tell(`warning: ${looseDataDir}`)
}

let app: App | undefined
let lock: DataDirLock | undefined
let admin: Awaited<ReturnType<typeof startAdmin>>
let stopping: Promise<void> | undefined
let graceCut: (() => void) | undefined

/**
 * SIGTERM, SIGINT or the end of piped input: nothing new is taken in; work under way may finish
 * for SHUTDOWN_GRACE (replies it produces are sent); then whatever still runs is stopped, to be
 * resumed at the next start. A second signal cuts the grace short.
 */
function shutdown(why: string, graceMs: number): Promise<void> {
  if (stopping) {
    graceCut?.()
    return stopping
  }
  stopping = (async () => {
    log.info({ why, graceMs }, "stopping")
    try {
      await admin?.server.stop()
      if (app) {
        await app.stopInput()
        log.info({ graceMs }, "taking no new input; waiting for the work under way")
        const cut = new AbortController()
        graceCut = () => cut.abort()
        await Promise.race([app.idle(), sleep(graceMs, undefined, { signal: cut.signal }).catch(() => {})])
        cut.abort()
        await app.stop()
      }
    } catch (error) {
      log.error({ err: error }, "error while stopping")
    }
    await memory.close()
    await lock?.release().catch((error) => log.error({ err: error }, "could not release the data folder lock"))
    log.info({ why }, "Steward stopped")
    tell("stopped")
    log.flush(() => process.exit(0))
  })()
  return stopping
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

/** Slack and Telegram when their tokens are set (both may run in one process); else the console.
 *  Only what is configured is loaded: a platform's library costs start-up time. */
async function channels({ telegram, slack }: Config): Promise<Channel[]> {
  const chat: Channel[] = []
  if (telegram.botToken) {
    const { TelegramChannel } = await import("../adapters/telegram/telegram.ts")
    chat.push(new TelegramChannel({ ...telegram, botToken: telegram.botToken }, log.child({ channel: "telegram" })))
  }
  if (slack.botToken) {
    const { SlackChannel } = await import("../adapters/slack/slack.ts")
    chat.push(new SlackChannel({ ...slack, botToken: slack.botToken }, log.child({ channel: "slack" })))
  }
  if (chat.length > 0) return chat
  const { ConsoleChannel } = await import("../adapters/console/console.ts")
  // Piped input that ends means "done talking": finish the work in hand, deliver it, exit.
  return [new ConsoleChannel(process.stdin, process.stdout, () => void app?.supervisor.idle().then(() => shutdown("input ended", 0)))]
}

process.on("SIGINT", () => void shutdown("SIGINT", config.shutdownGraceMs))
process.on("SIGTERM", () => void shutdown("SIGTERM", config.shutdownGraceMs))
// Nothing a model or a user sends may take the process down; log it and go on.
process.on("unhandledRejection", (error) => log.error({ err: error }, "unhandled rejection"))

/** Runs a start-up step; an error ends the process with one line and code 1. */
try {
  // Before anything touches the data folder: a second copy on it would run the same work twice.
  // With the store on Postgres, processes share the folder and the leader lock decides instead.
  if (!config.storeUrl) lock = await lockDataDir(config.dataDir, (error) => log.error({ err: error }, "lost the data folder lock: another Steward may start on it"))
  const started = await channels(config)
  const metrics = new Metrics()
  app = await startApp(config, log, started, memory, undefined, {
    metrics,
    // Crash-only: a process that lost the leader lock or could not lead ends; it is started again.
    onFatal: (error) => {
      log.fatal({ err: error }, "cluster: this process must stop")
      log.flush()
      process.exit(1)
    },
  })
  const { store } = app
  // A failed write of an error is not logged again: that could only repeat itself.
  keepError = (entry) => void store.owner.recordError(entry).catch(() => {})
  admin = await startAdmin(config, app, started, metrics, log)
  // The same check as `steward doctor`, in the background: a bad key or model id is named now,
  // not at the first message.
  void checkModels(config).then((checks) => {
    for (const check of checks) {
      if (check.ok) continue
      log.warn({ check }, `${check.name}: ${check.detail} (fix: ${check.fix})`)
      tell(`warning: ${check.name}: ${check.detail} (fix: ${check.fix})`)
    }
  })
  log.info({ dataDir: config.dataDir, channels: started.map((channel) => channel.name), adminPort: admin?.port, process: app.cluster?.membership.id }, "Steward started")
  tell(`started (${started.map((channel) => channel.name).join(", ")}); logs in ${logFile}; Ctrl-C stops`)
  // Notes written or changed while Steward was down (or under another model) are embedded in the background.
  void memory.embedAll().catch((error) => log.warn({ err: error }, "memory: could not list the memory folders to embed"))
} catch (error) {
  failStart(error)
}
