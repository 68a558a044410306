import { randomBytes } from "node:crypto"
import pg from "pg"
import { inject } from "vitest"

export interface FreshDatabase {
  url: string
  /** Drops the database, ending any connection still open to it. */
  drop(): Promise<void>
}

/** On the test run's Postgres (test/support/postgres.ts), a new empty database of its own, so
 *  tests never see each other's data. */
export async function freshDatabase(): Promise<FreshDatabase> {
  const server = inject("postgresUrl")
  const name = `steward_${randomBytes(8).toString("hex")}`
  await admin(server, `CREATE DATABASE ${name}`)
  const url = new URL(server)
  url.pathname = `/${name}`
  return { url: url.toString(), drop: () => admin(server, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) }
}

async function admin(server: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: server })
  await client.connect()
  try {
    await client.query(sql)
  } finally {
    await client.end()
  }
}
