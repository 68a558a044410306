/**
 * One Steward per data folder, with real processes: a second copy on the same DATA_DIR exits 2
 * naming the folder and the running copy's pid, the owner CLI keeps working beside the server, and
 * a copy killed outright leaves a lock the next start takes over at once.
 */
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { StewardProcess } from "../support/process.ts"
import { waitFor } from "../support/wait-for.ts"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const HOOKS_TOKEN = "hooks-token-0123456789"

let dataDir: string
const started: StewardProcess[] = []

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), "steward-lock-"))
})

afterEach(async () => {
  for (const steward of started.splice(0)) if (steward.child.exitCode === null && steward.child.signalCode === null) await steward.kill()
  rmSync(dataDir, { recursive: true, force: true })
})

/** A port nothing listens on right now (the hooks port is configuration, not listen(0)). */
async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

function start(env: Record<string, string> = {}): StewardProcess {
  // The model is never called: nobody writes to these consoles.
  const steward = StewardProcess.start({ DATA_DIR: dataDir, MODEL: "openai-compatible:unused", OPENAI_COMPATIBLE_BASE_URL: "http://127.0.0.1:9/v1", LOG_LEVEL: "info", ...env })
  started.push(steward)
  return steward
}

const running = (steward: StewardProcess) => waitFor(() => steward.stderr.join("").includes("Steward started"), 30_000)

function cli(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ["dist/cli.js", ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? "", DATA_DIR: dataDir } })
  let stdout = ""
  let stderr = ""
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
  return new Promise((resolve) => child.on("exit", (code) => resolve({ code, stdout, stderr })))
}

describe("one Steward per data folder", () => {
  it("refuses a second copy on the same DATA_DIR with exit 2 and one line naming it and the other pid; the CLI works beside", async () => {
    const first = start()
    await running(first)

    const second = start()
    expect(await second.exited).toBe(2)
    const lines = second.stderr.join("").trim().split("\n")
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain(`DATA_DIR ${dataDir} is in use by another Steward (pid ${first.child.pid})`)

    const listed = await cli("pairing", "list")
    expect(listed).toMatchObject({ code: 0, stdout: "no pairing requests\n" })
    expect(first.child.exitCode).toBeNull()

    // A clean stop gives the folder back.
    first.child.stdin.end()
    expect(await first.exited).toBe(0)
    expect(existsSync(join(dataDir, "steward.lock"))).toBe(false)
    const third = start()
    await running(third)
  }, 90_000)

  it("takes over at once the lock of a copy that was killed", async () => {
    const first = start()
    await running(first)
    await first.kill("SIGKILL")
    expect(existsSync(join(dataDir, "steward.lock"))).toBe(true)
    const next = start()
    await running(next)
    expect(next.child.exitCode).toBeNull()
  }, 90_000)

  it("takes over at once the lock of a copy that exited but was not reaped (a zombie)", async () => {
    // The shell starts Steward (its input a pipe that stays open) and becomes `sleep`, which never
    // reaps it: killed, Steward stays a zombie whose pid still answers kill(pid, 0).
    const env = { PATH: process.env.PATH ?? "", DATA_DIR: dataDir, MODEL: "openai-compatible:unused", OPENAI_COMPATIBLE_BASE_URL: "http://127.0.0.1:9/v1", LOG_LEVEL: "info", ADMIN_PORT: "off" }
    const parent = spawn("sh", ["-c", `sleep 120 | "${process.execPath}" dist/main.js & exec sleep 120`], { cwd: ROOT, env, stdio: ["ignore", "ignore", "pipe"] })
    let stderr = ""
    parent.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    try {
      await waitFor(() => stderr.includes("Steward started"), 30_000)
      const pid = Number(readFileSync(join(dataDir, "steward.pid"), "utf8"))
      process.kill(pid, "SIGKILL")
      await waitFor(() => readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.startsWith("Z"), 10_000)
      const next = start()
      await running(next)
      expect(next.child.exitCode).toBeNull()
    } finally {
      parent.kill("SIGKILL")
    }
  }, 90_000)

  it("keeps running after POST /hooks/% with a valid token, which answers 400", async () => {
    const port = await freePort()
    const steward = start({ HOOKS_TOKEN, HOOKS_PORT: String(port) })
    await running(steward)
    const hook = (name: string) => fetch(`http://127.0.0.1:${port}/hooks/${name}`, { method: "POST", headers: { authorization: `Bearer ${HOOKS_TOKEN}` } })
    expect((await hook("%")).status).toBe(400)
    expect((await hook("%E0%A4%A")).status).toBe(400)
    expect((await hook("deploy.done")).status).toBe(202)
    expect(steward.child.exitCode).toBeNull()
  }, 90_000)
})
