/** Child of bench/year.ts: starts Steward (no channels) on the given data folder and prints how
 *  long that took and the process's RSS once it had. */
import pino from "pino"
import { startApp } from "../src/app.ts"
import { loadConfig } from "../src/config/config.ts"

const dataDir = process.argv[2]!
const config = loadConfig({ DATA_DIR: dataDir, MODEL: "openai-compatible:instant", OPENAI_COMPATIBLE_BASE_URL: "http://127.0.0.1:9/v1", ALLOWED_USERS: "*", WORKER_CONCURRENCY: "1" })
const memory = { remember: async () => ({ path: "" }), search: async () => [], recordCompaction: async () => {} }
const started = performance.now()
const app = await startApp(config, pino({ level: "silent" }), [], memory)
const ms = performance.now() - started
const rssMb = process.memoryUsage().rss / 1024 / 1024
await app.supervisor.scheduler.stop()
process.stdout.write(`${JSON.stringify({ ms, rssMb })}\n`)
process.exit(0)
