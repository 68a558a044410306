/**
 * The owner CLI as an owner meets it (the built `dist/cli.js`): one line and a non-zero exit
 * instead of a stack trace, no store made by a command that only reads, no MODEL where no model
 * is asked, JSON where asked, and every printed time naming its zone.
 */
import { execFile } from "node:child_process"
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import type { TriggerRecord } from "../../src/core/types.ts"
import { ScheduleRequest } from "../../src/schedule/request.ts"
import { Store } from "../../src/store/store.ts"
import { freshDatabase } from "../support/pg.ts"

const run = promisify(execFile)
let root: string
let dataDir: string

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "steward-owner-cli-"))
  dataDir = join(root, "data")
})
afterEach(() => rmSync(root, { recursive: true, force: true }))

async function cli(args: string[], env: Record<string, string> = {}, uid?: number): Promise<{ code: number; stdout: string; stderr: string }> {
  return run(process.execPath, ["dist/cli.js", ...args], { env: { PATH: process.env.PATH ?? "", DATA_DIR: dataDir, ...env }, timeout: 60_000, ...(uid === undefined ? {} : { uid, gid: uid }) }).then(
    (out) => ({ code: 0, ...out }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  )
}

/** One line on stderr, no stack trace. */
function oneLine(stderr: string): string {
  const lines = stderr.trim().split("\n")
  expect(lines).toHaveLength(1)
  expect(stderr).not.toMatch(/\n\s+at /)
  return lines[0]!
}

const trigger = (id: string, nextRunAt: string): TriggerRecord => ({
  id, conversation: "console:local", user: "console:local", kind: "recurring", prompt: "check the weather", interval: 3600, cooldown: 0, timeout: null, onMissed: "skip", maxLateness: 60,
  status: "active", nextRunAt, createdAt: nextRunAt, origin: `test:${id}`,
})

async function seed(use: (store: Store) => Promise<void>): Promise<void> {
  const store = await Store.open(dataDir)
  await use(store).finally(() => store.close())
}

describe("steward CLI: errors an owner can read", () => {
  it.each([["status"], ["tasks"], ["triggers"], ["usage"], ["task", "01JD"], ["pairing", "list"], ["users"], ["memory", "search", "dentist"], ["backup", "copy.sqlite"]])(
    "%s on a folder with no Steward data says so and creates nothing",
    async (...args) => {
      const { code, stderr } = await cli(args)
      expect(code).toBe(1)
      expect(oneLine(stderr)).toMatch(new RegExp(`^steward: no Steward data in ${dataDir}\\b`))
      expect(existsSync(dataDir)).toBe(false)
    },
    60_000,
  )

  it.skipIf(process.getuid?.() !== 0)("a store this user may not write is one line naming it, exit 1 (run as nobody)", async () => {
    await seed(async () => {})
    chmodSync(root, 0o755)
    const { code, stderr } = await cli(["status"], {}, 65534)
    expect(code).toBe(1)
    expect(oneLine(stderr)).toMatch(new RegExp(`^steward: could not open the store ${join(dataDir, "steward.sqlite")}: .*SQLITE_`))
    const backup = await cli(["backup", join(root, "copy.sqlite")], {}, 65534)
    expect(oneLine(backup.stderr)).toMatch(new RegExp(`^steward: could not open the store ${join(dataDir, "steward.sqlite")}`))
  }, 60_000)

  it.skipIf(process.getuid?.() !== 0)("a data folder this user may not read is said so, naming its owner, not \"no Steward data\" (run as nobody)", async () => {
    await seed(async () => {})
    chmodSync(root, 0o755)
    chmodSync(dataDir, 0o700)
    for (const args of [["status"], ["memory", "search", "dentist"]]) {
      const { code, stderr } = await cli(args, {}, 65534)
      expect(code).toBe(1)
      expect(oneLine(stderr)).toMatch(new RegExp(`^steward: cannot read ${dataDir}/\\S+ \\(EACCES\\): run steward as the user that owns ${dataDir} \\(uid 0\\)`))
    }
    chmodSync(dataDir, 0o755)
    const readOnly = await cli(["status"], {}, 65534)
    expect(oneLine(readOnly.stderr)).toMatch(/SQLITE_READONLY.*; run steward as the user that owns .* \(uid 0\)/)
  }, 60_000)

  it.each([["status", "--bogus"], ["setup", "--model"], ["no-such-command"]])("a mistake in the command line (%j) is one line, not the help", async (...args) => {
    const { code, stderr } = await cli(args)
    expect(code).toBe(2)
    expect(oneLine(stderr)).toMatch(/^steward: .* \(see --help\)$/)
  }, 60_000)

  it("a Postgres password or database the server refuses is one line naming STORE_URL, exit 2", async () => {
    const database = await freshDatabase()
    try {
      const url = new URL(database.url)
      url.password = "wrong"
      const { code, stderr } = await cli(["status"], { STORE_URL: url.toString() })
      expect(code).toBe(2)
      expect(oneLine(stderr)).toMatch(/^steward: STORE_URL: Postgres store at postgres:\/\/steward:\*\*\*@.*password authentication failed/)
    } finally {
      await database.drop()
    }
  }, 60_000)
})

describe("steward CLI: what needs no model, JSON, zones", () => {
  it("users, memory search and usage work without MODEL", async () => {
    await seed((store) => store.save({ allowed: ["telegram:42"] }))
    mkdirSync(join(dataDir, "memory", "console-local"), { recursive: true })
    writeFileSync(join(dataDir, "memory", "console-local", "memory.md"), "# Notes\n\nThe dentist is Dr. Quillfeather.\n")
    const users = await cli(["users", "--json"])
    expect(users.code).toBe(0)
    expect(JSON.parse(users.stdout).users.map((u: { user: string }) => u.user)).toEqual(["console:local", "telegram:42"])
    const found = await cli(["memory", "search", "dentist"])
    expect(found.code).toBe(0)
    expect(found.stdout).toContain("Quillfeather")
    const usage = await cli(["usage", "--json"])
    expect(usage.code).toBe(0)
    expect(JSON.parse(usage.stdout).quotas.limits).toBeDefined()
    const badQuota = await cli(["usage"], { QUOTA_SCHEDULES: "many" })
    expect(badQuota.code).toBe(2)
    expect(oneLine(badQuota.stderr)).toMatch(/^steward: QUOTA_SCHEDULES: /)
  }, 60_000)

  it("cron --json prints JSON, and the preview refuses what a schedule refuses, in the same words", async () => {
    const preview = await cli(["cron", "0 8 * * *", "--tz", "Asia/Tokyo", "--count", "2", "--json"])
    expect(preview.code).toBe(0)
    const data = JSON.parse(preview.stdout)
    expect(data).toMatchObject({ expression: "0 8 * * *", timezone: "Asia/Tokyo", runs: [{ utc: expect.stringMatching(/T23:00:00Z$/) }, {}] })
    expect(data.runs[0].local).toMatch(/08:00:00 GMT\+09:00$/)

    const refused = await cli(["cron", "*/30 * * * * *"])
    expect(refused.code).toBe(2)
    const schedule = ScheduleRequest.safeParse({ type: "recurring", prompt: "x", cron: "*/30 * * * * *" })
    const words = schedule.success ? "" : schedule.error.issues[0]!.message
    expect(words).toBe("runs more than once a minute: give the seconds field one value")
    expect(oneLine(refused.stderr)).toBe(`steward: ${words}`)
  }, 60_000)

  it("cron names the zone a fixed-offset POSIX TZ stands for (UTC0 is UTC)", async () => {
    const preview = await cli(["cron", "0 8 * * *", "--count", "1", "--json"], { TZ: "UTC0" })
    expect(JSON.parse(preview.stdout)).toMatchObject({ timezone: "UTC", runs: [{ utc: expect.stringMatching(/T08:00:00Z$/) }] })
  }, 60_000)

  it("memory search on a Steward that has kept no note yet finds nothing, and creates nothing", async () => {
    await seed(async () => {})
    const { code, stdout } = await cli(["memory", "search", "dentist"])
    expect(code).toBe(0)
    expect(stdout).toBe('nothing found for "dentist"\n')
    expect(existsSync(join(dataDir, "memory"))).toBe(false)
  }, 60_000)

  it("every time triggers, status and usage print names its zone", async () => {
    await seed((store) => store.save({ triggers: [trigger("01AAAATRIGGERONE0000000000", "2030-01-15T07:00:00.000Z")] }))
    const berlin = await cli(["triggers"], { TZ: "Europe/Berlin" })
    expect(berlin.stdout).toContain("2030-01-15 08:00 +01:00")
    const utc = await cli(["triggers"], { TZ: "UTC" })
    expect(utc.stdout).toContain("2030-01-15 07:00 UTC")
    const status = await cli(["status"], { TZ: "America/New_York", MODEL: "openai:x", OPENAI_API_KEY: "k" })
    expect(status.stdout).toContain("2030-01-15 02:00 -05:00")
    await seed((store) => store.owner.recordUsage({ at: new Date().toISOString(), role: "teller", agent: "teller", conversation: "console:local", user: "console:local", sessionId: "s", model: "openai:x", input: 10, cachedInput: 0, output: 1 }))
    const usage = await cli(["usage"], { TZ: "Asia/Tokyo" })
    expect(usage.stdout).toMatch(/^DAY \(UTC\) +ROLE/m)
    expect(usage.stdout).toMatch(/^Today \(\d{4}-\d\d-\d\d, UTC\) per user/m)
  }, 60_000)
})
