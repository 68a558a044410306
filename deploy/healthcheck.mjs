// The container's health check (the Dockerfile's HEALTHCHECK): GET /healthz on ADMIN_PORT when
// the admin server is on; with ADMIN_PORT=off, `steward status` says whether Steward runs on
// DATA_DIR (or in the cluster of STORE_URL). Exit 0 healthy, 1 not.
import { execFile } from "node:child_process"

const port = process.env.ADMIN_PORT || "8791"
const TIMEOUT_MS = 4000
// Starting the CLI costs seconds on a busy machine; the Dockerfile's --timeout (30 s) is longer.
const STATUS_TIMEOUT_MS = 25_000

if (port === "off") {
  const cli = new URL("../dist/cli.js", import.meta.url).pathname
  execFile(process.execPath, [cli, "status", "--json"], { timeout: STATUS_TIMEOUT_MS }, (error, stdout) => {
    let running = false
    try {
      running = !error && JSON.parse(stdout).running === true
    } catch {
      // Not JSON: the CLI failed.
    }
    process.exit(running ? 0 : 1)
  })
} else {
  fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(TIMEOUT_MS) }).then(
    (response) => process.exit(response.ok ? 0 : 1),
    () => process.exit(1),
  )
}
