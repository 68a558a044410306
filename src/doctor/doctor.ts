import { join } from "node:path"
import pino from "pino"
import { chatChannels, dataDirOf, loadConfig, type Config } from "../config/config.ts"
import { ensureDataDir } from "../config/data-dir.ts"
import { redactUrl } from "../config/fields.ts"
import { lockState } from "../lock/data-dir-lock.ts"
import { mcpStatus } from "../mcp/hub.ts"
import { checkModels } from "../model/model-check.ts"
import { postgresVersion } from "../store/postgres.ts"
import { checkSlack, checkTelegram } from "./channels.ts"
import { failed, passed, reason, type Check } from "./check.ts"

/** The data folder can be written, and no stale process holds its lock. */
async function checkDataDir(dataDir: string): Promise<Check[]> {
  // The same check start-up makes (and the same words): a failure here is an exit 2 there.
  const writable = await ensureDataDir(dataDir).then(
    () => passed("data folder", `${dataDir} is writable`),
    (error: unknown) => failed("data folder", reason(error), "give the user running Steward write access to it, or set DATA_DIR to a folder it owns"),
  )
  const lock = await lockState(dataDir)
  const held =
    lock.state === "held"
      ? passed("data folder lock", `held by the running Steward (pid ${lock.pid ?? "unknown"})`)
      : lock.state === "stale"
        ? failed("data folder lock", `left by pid ${lock.pid ?? "unknown"}, which is not running`, `start-up takes it over; or remove ${join(dataDir, "steward.lock")}`)
        : passed("data folder lock", "free: no Steward runs on it")
  return [writable, held]
}

/** The Postgres database of STORE_URL answers. */
async function checkStore(url: string): Promise<Check> {
  return postgresVersion(url).then(
    (version) => passed("store", `Postgres ${version} at ${redactUrl(url)} answers`),
    (error: unknown) => failed("store", error instanceof Error ? error.message : String(error), "start the database, or correct STORE_URL (user, password, host, port, database)"),
  )
}

/** Every check `steward doctor` runs, in order; configuration first, then what it names. */
export async function runDoctor(env: NodeJS.ProcessEnv = process.env): Promise<Check[]> {
  let config: Config
  try {
    config = loadConfig(env)
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    return [failed("configuration", message, "correct that variable in .env or the environment (see .env.example)"), ...(await checkDataDir(dataDirOf(env)))]
  }
  const checks: Check[] = [passed("configuration", `reads as start-up reads it; channels: ${chatChannels(config).join(", ")}`), ...(await checkDataDir(config.dataDir))]
  if (config.storeUrl) checks.push(await checkStore(config.storeUrl))
  checks.push(...(await checkModels(config)))
  if (config.telegram.botToken) checks.push(await checkTelegram(config.telegram))
  if (config.slack.botToken) checks.push(...(await checkSlack(config.slack)))
  if (config.mcp.configFile) {
    try {
      for (const server of await mcpStatus(config, pino({ level: "silent" }))) {
        checks.push(server.state === "running" ? passed(`MCP ${server.name}`, `running, tools: ${server.tools.join(", ") || "none"}`) : failed(`MCP ${server.name}`, `${server.state}: ${server.lastError ?? "no error given"}`, `check the "${server.name}" entry of ${config.mcp.configFile} (its command, URL or credentials)`))
      }
    } catch (error) {
      checks.push(failed("MCP_CONFIG", reason(error), `correct ${config.mcp.configFile}`))
    }
  }
  return checks
}
