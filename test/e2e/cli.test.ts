import { execFile } from "node:child_process"
import { mkdtempSync, rmSync, statSync } from "node:fs"
import { readFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import type { TriggerRecord } from "../../src/core/types.ts"
import { Store } from "../../src/store/store.ts"
import { startModelServer, type ModelServer } from "../fakes/model-server.ts"
import { StewardProcess } from "../support/process.ts"

const run = promisify(execFile)
let dataDir: string
let models: ModelServer | undefined
let steward: StewardProcess | undefined

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), "steward-cli-"))
})
afterEach(async () => {
  if (steward && steward.child.exitCode === null) await steward.kill()
  await models?.close()
  rmSync(dataDir, { recursive: true, force: true })
})

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { PATH: process.env.PATH, DATA_DIR: dataDir, MODEL: "openai-compatible:scripted", OPENAI_COMPATIBLE_BASE_URL: models?.url ?? "http://127.0.0.1:9/v1" }
  return run(process.execPath, ["dist/cli.js", ...args], { env, timeout: 30_000 }).then(
    (out) => ({ code: 0, ...out }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  )
}

const trigger = (id: string): TriggerRecord => ({
  id, conversation: "console:local", user: "console:local", kind: "recurring", prompt: "check the weather", interval: 3600, cooldown: 0, timeout: null, onMissed: "skip", maxLateness: 60,
  status: "active", nextRunAt: new Date(Date.now() + 3600_000).toISOString(), createdAt: new Date().toISOString(), origin: `test:${id}`,
})

async function seed(use: (store: Store) => Promise<void>): Promise<void> {
  const store = await Store.open(dataDir)
  await use(store).finally(() => store.close())
}

describe("the built CLI", () => {
  it("runs as `npx steward` runs it (node dist/cli.js): version reads the package's package.json", async () => {
    const { version } = JSON.parse(await readFile("package.json", "utf8")) as { version: string }
    const built = await run(process.execPath, ["dist/cli.js", "version", "--json"], { env: { PATH: process.env.PATH }, timeout: 30_000 })
    expect(JSON.parse(built.stdout)).toEqual({ version })
  })
})

describe("the owner CLI against a running Steward", () => {
  it("status, usage, backup, doctor, trigger pause/remove and users revoke work while it runs", async () => {
    await seed((store) => store.save({ triggers: [trigger("01AAAATRIGGERONE0000000000"), trigger("01BBBBTRIGGERTWO0000000000")], allowed: ["telegram:42"] }))
    models = await startModelServer(() => ({ text: "" }))
    steward = StewardProcess.start({ DATA_DIR: dataDir, MODEL: "openai-compatible:scripted", OPENAI_COMPATIBLE_BASE_URL: models.url, LOG_LEVEL: "info" })
    await steward.waitFor((p) => p.stderr.join("").includes("Steward started"), "start-up")

    const status = JSON.parse((await cli("status", "--json")).stdout)
    expect(status).toMatchObject({ running: true, pid: steward.child.pid, channels: ["console"], activeTriggers: 2, outboxBacklog: 0 })
    expect(status.nextTriggers.map((t: { id: string }) => t.id)).toEqual(["01AAAATRIGGERONE0000000000", "01BBBBTRIGGERTWO0000000000"])
    expect((await cli("status")).stdout).toContain(`Steward is running (pid ${steward.child.pid})`)

    // Usage samples as the model calls will record them, written beside the running server.
    const at = new Date().toISOString()
    await seed(async (store) => {
      const call = { at, conversation: "console:local", sessionId: "s1", model: "openai-compatible:scripted" }
      await store.owner.recordUsage({ ...call, role: "teller", agent: "teller", input: 1000, cachedInput: 750, output: 20 })
      await store.owner.recordUsage({ ...call, role: "teller", agent: "teller", input: 1000, cachedInput: 250, output: 30 })
      await store.owner.recordUsage({ ...call, user: "telegram:42", role: "worker", agent: "default", taskId: "t1", input: 400, cachedInput: 0, output: 100 })
    })
    const usage = JSON.parse((await cli("usage", "--days", "1", "--json")).stdout)
    expect(usage.byRole).toEqual([
      { day: "all", role: "teller", calls: 2, input: 2000, cachedInput: 1000, output: 50, cachedShare: 0.5 },
      { day: "all", role: "worker", calls: 1, input: 400, cachedInput: 0, output: 100, cachedShare: 0 },
    ])
    expect((await cli("usage")).stdout).toMatch(/teller\s+2\s+2000\s+1000 \(50%\)\s+50/)
    // Each user's use today against the quotas: tokens of every role for them, their schedules.
    expect(usage.quotas.limits).toMatchObject({ QUOTA_TOKENS_PER_DAY: 2_000_000, QUOTA_MESSAGES_PER_MINUTE: 20 })
    expect(usage.quotas.users).toContainEqual({ user: "telegram:42", owner: false, tokensToday: 500, recurringSchedules: 0, notesToday: 0, uploadsToday: 0 })
    expect((await cli("usage")).stdout).toMatch(/telegram:42\s+500\/2000000\s+0\/10\s+0\/50\s+0\/50/)

    const copy = join(dataDir, "backup")
    const backedUp = await cli("backup", join(copy, "steward.sqlite"))
    expect(backedUp).toMatchObject({ code: 1 }) // the folder does not exist: a clear error, no crash
    expect(backedUp.stderr).toMatch(/^steward: could not write/)
    rmSync(copy, { recursive: true, force: true })
    await import("node:fs").then((fs) => fs.mkdirSync(copy))
    expect((await cli("backup", join(copy, "steward.sqlite"))).stdout).toMatch(/^backed up to /)
    // The owner's alone whatever the umask the CLI was started with (the test's, usually 022).
    expect((statSync(join(copy, "steward.sqlite")).mode & 0o777).toString(8)).toBe("600")
    const restored = await Store.open(copy)
    expect((await restored.schedules.triggers()).length).toBe(2)
    expect((await restored.owner.usageSince(0)).length).toBe(3)
    await restored.close()
    expect((await cli("backup", join(copy, "steward.sqlite"))).stderr).toContain("exists; give a new file")

    const doctor = await cli("doctor")
    expect(doctor.code).toBe(0)
    expect(doctor.stdout).toContain(`data folder lock: held by the running Steward (pid ${steward.child.pid})`)
    expect(doctor.stdout).toContain("ok    model openai-compatible:scripted (teller, planner, worker): the model is listed")

    // Changes the server holds in memory: applied by the server and answered.
    expect((await cli("trigger", "pause", "01aaaa")).stdout).toBe("trigger 01AAAATRIGGERONE0000000000 paused\n")
    expect((await cli("trigger", "pause", "01AAAA")).stderr).toBe("steward: schedule 01AAAATRIGGERONE0000000000 is already paused\n")
    expect((await cli("trigger", "remove", "01BBBB")).stdout).toBe("trigger 01BBBBTRIGGERTWO0000000000 removed\n")
    expect(await cli("trigger", "remove", "01")).toMatchObject({ code: 2, stderr: "steward: give at least 4 characters of the trigger id\n" })
    const triggers = (await cli("triggers")).stdout
    expect(triggers).toMatch(/01AAAATRIGGERONE0000000000\s+paused/)
    expect(triggers).not.toContain("01BBBB")
    expect((await cli("trigger", "resume", "01AAAA")).stdout).toBe("trigger 01AAAATRIGGERONE0000000000 resumed\n")

    expect((await cli("users")).stdout).toMatch(/telegram:42\s+approved/)
    expect((await cli("users", "revoke", "telegram:42")).stdout).toBe("revoked telegram:42\n")
    expect((await cli("users", "revoke", "telegram:42")).stderr).toContain("telegram:42 is not an approved user")
    expect((await cli("users", "revoke", "console:local")).stderr).toContain("is an owner in ALLOWED_USERS")
  }, 180_000)
})
