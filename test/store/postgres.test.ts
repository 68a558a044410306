import { taskRecord } from "../support/records.ts"
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { SCHEMA, meta, put } from "../../src/store/collections.ts"
import { migrate, NewerDataError, SCHEMA_VERSION, type Migration } from "../../src/store/migrations.ts"
import { PostgresBackend } from "../../src/store/postgres.ts"
import { Store } from "../../src/store/store.ts"
import type { TaskRecord } from "../../src/core/types.ts"
import { freshDatabase, type FreshDatabase } from "../support/pg.ts"
import { backendContract } from "./contract.ts"

backendContract("Postgres", () => {
  let database: FreshDatabase | undefined
  return {
    open: async (schema) => {
      database = await freshDatabase()
      return PostgresBackend.open(database.url, schema)
    },
    reopen: (schema) => PostgresBackend.open(database!.url, schema),
    dispose: async () => database?.drop(),
  }
})

const task = (id: string, status: TaskRecord["status"]): TaskRecord =>
  taskRecord(id, { status, attempts: 0, ...(status === "queued" ? { endedAt: undefined } : { reported: true }) })

let database: FreshDatabase
let dir: string
beforeEach(async () => {
  database = await freshDatabase()
  dir = mkdtempSync(join(tmpdir(), "steward-pg-store-"))
})
afterEach(async () => {
  await database.drop()
  rmSync(dir, { recursive: true, force: true })
})

describe("Store on Postgres", () => {
  it("Store.open with a URL lays out an empty database at the current schema version, and reads its data back after a reopen", async () => {
    const store = await Store.open(dir, database.url)
    await store.save({ tasks: [task("T-1", "queued"), task("T-2", "completed")] })
    await store.close()
    const again = await Store.open(dir, database.url)
    try {
      expect((await again.tasks()).map((t) => t.id)).toEqual(["T-1", "T-2"])
      expect((await again.taskByOrigin("S:T-2"))?.status).toBe("completed")
    } finally {
      await again.close()
    }
    const backend = await PostgresBackend.open(database.url, SCHEMA)
    expect(await backend.get("meta", "schema")).toEqual({ id: "schema", version: SCHEMA_VERSION })
    await backend.close()
  })

  it("three processes opening one fresh database at once: no error, the schema laid out and each migration run once", async () => {
    const ran: number[] = []
    const step = (version: number): Migration => ({ version, description: `step ${version}`, up: async () => void ran.push(version) })
    const migrations = [step(1), step(2)]
    const backends = await Promise.all([1, 2, 3].map(() => PostgresBackend.open(database.url, SCHEMA, (backend) => migrate(backend, migrations))))
    expect(ran).toEqual([1, 2])
    await Promise.all(backends.map((backend) => backend.close()))
    const other = await freshDatabase()
    const stores = await Promise.all([1, 2, 3].map(() => Store.open(dir, other.url)))
    await Promise.all(stores.map((store, i) => store.save({ tasks: [task(`T-${i}`, "queued")] })))
    expect((await stores[0]!.tasks()).map((t) => t.id)).toEqual(["T-0", "T-1", "T-2"])
    await Promise.all(stores.map((store) => store.close()))
    await other.drop()
  })

  it("refuses data from a newer version", async () => {
    const backend = await PostgresBackend.open(database.url, SCHEMA)
    await backend.write([put(meta, { id: "schema", version: SCHEMA_VERSION + 1 })])
    await backend.close()
    await expect(Store.open(dir, database.url)).rejects.toThrow(NewerDataError)
  })

  it("backs up one snapshot into a new SQLite store file that opens as a DATA_DIR store, and refuses a file that exists", async () => {
    const store = await Store.open(dir, database.url)
    try {
      const many = Array.from({ length: 2500 }, (_, i) => task(`T-${String(i).padStart(5, "0")}`, i % 2 ? "queued" : "completed"))
      await store.save({ tasks: many })
      await store.channelState("telegram").set("status/a", { ref: 9 })
      const backup = join(dir, "steward.sqlite")
      // A write going on while the copy is taken does not stop it; the copy holds it or not.
      await Promise.all([store.backup(backup), store.save({ tasks: [task("T-LATE", "queued")] })])
      writeFileSync(join(dir, "taken"), "")
      await expect(store.backup(join(dir, "taken"))).rejects.toThrow(/EEXIST/)
      const restored = await Store.open(dir)
      try {
        const tasks = await restored.tasks()
        expect(tasks.filter((t) => t.id !== "T-LATE")).toHaveLength(2500)
        expect((await restored.liveTasks()).filter((t) => t.id !== "T-LATE")).toHaveLength(1250)
        expect(await restored.owner.recentErrors(1)).toEqual([])
        expect((await restored.taskByOrigin("S:T-00007"))?.id).toBe("T-00007")
        expect(await restored.channelState("telegram").list("status/")).toEqual([{ key: "status/a", value: { ref: 9 } }])
      } finally {
        await restored.close()
      }
    } finally {
      await store.close()
    }
  })

  it("the CLI reads and backs up the Postgres store when STORE_URL is set, and never prints its password", async () => {
    const store = await Store.open(dir, database.url)
    await store.save({ tasks: [task("T-CLI", "queued")] })
    await store.close()
    const cli = (args: string[], env: Record<string, string>) =>
      promisify(execFile)(process.execPath, [new URL("../../dist/cli.js", import.meta.url).pathname, ...args], { env: { ...process.env, DATA_DIR: join(dir, "data"), ...env }, encoding: "utf8" })
    const status = JSON.parse((await cli(["status", "--json"], { STORE_URL: database.url })).stdout)
    expect(status.queues.worker).toEqual({ queued: 1, running: 0 })
    expect((await cli(["backup", join(dir, "b.sqlite")], { STORE_URL: database.url })).stdout).toMatch(/^backed up to /)
    const password = new URL(database.url).password
    const bad = await cli(["status"], { STORE_URL: database.url.replace(/^postgres:/, "mysql:") }).catch((error: { code: number; stderr: string }) => error)
    expect(bad).toMatchObject({ code: 2 })
    expect((bad as { stderr: string }).stderr).toMatch(/^steward: STORE_URL: expected postgres:\/\/.*, got "mysql:\/\/steward:\*\*\*@127\.0\.0\.1:\d+\/steward_[0-9a-f]+"\n$/)
    expect((bad as { stderr: string }).stderr).not.toContain(`:${password}@`)
  })
})
