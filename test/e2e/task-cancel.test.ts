import { execFile } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import type { TaskRecord } from "../../src/core/types.ts"
import { startModelServer, type ModelServer } from "../fakes/model-server.ts"
import { chain, scriptedEnv, untilWhileRunning } from "../support/e2e.ts"
import { StewardProcess } from "../support/process.ts"
import { eventually } from "../support/wait-for.ts"

const run = promisify(execFile)
let dataDir: string
let models: ModelServer | undefined
let steward: StewardProcess | undefined

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), "steward-task-cancel-"))
})
afterEach(async () => {
  if (steward && steward.child.exitCode === null) await steward.kill()
  await models?.close()
  rmSync(dataDir, { recursive: true, force: true })
})

/** The built CLI (`npx steward`) on the same data folder. */
async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return run(process.execPath, ["dist/cli.js", ...args], { env: { PATH: process.env.PATH, DATA_DIR: dataDir }, timeout: 30_000 }).then(
    (out) => ({ code: 0, ...out }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  )
}

describe("steward task cancel", () => {
  it("stops a running task from outside: it ends cancelled, the Teller hears of it, and a second cancel says it has ended", async () => {
    let workerRuns = 0
    models = await startModelServer(chain(() => (workerRuns++, { hang: true })))
    steward = StewardProcess.start({ ...scriptedEnv(dataDir, models.url), LOG_LEVEL: "info" })
    steward.send("count every grain of sand")
    await untilWhileRunning(steward, "the worker's run", () => workerRuns === 1)
    let worker: TaskRecord | undefined
    await eventually(async () => {
      const tasks = JSON.parse((await cli("tasks", "--json")).stdout) as TaskRecord[]
      worker = tasks.find((task) => task.role === "worker" && task.status === "running")
      return worker !== undefined
    }, "the worker task running in the store", 20_000)

    const cancelled = await cli("task", "cancel", worker!.id.slice(0, 10))
    expect(cancelled).toMatchObject({ code: 0, stdout: `task ${worker!.id} cancelled\n` })
    const shown = JSON.parse((await cli("task", worker!.id, "--json")).stdout) as { task: TaskRecord }
    expect(shown.task).toMatchObject({ status: "cancelled", error: "cancelled by the owner" })
    // The batch reports like any ended task: the Teller relays it.
    await steward.waitFor((p) => p.replies.some((reply) => reply.startsWith("Result:")), "the Teller's report of the cancelled batch")
    expect(workerRuns).toBe(1)

    const again = await cli("task", "cancel", worker!.id)
    expect(again.code).toBe(1)
    expect(again.stderr).toBe(`steward: task ${worker!.id} has already ended (cancelled)\n`)
    expect((await cli("task", "cancel", "zz")).code).toBe(2)
  }, 90_000) // five CLI runs, each a process start on a shared machine
})
