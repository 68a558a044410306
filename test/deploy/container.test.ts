/**
 * The deployment files as an owner uses them (no Docker daemon here: the Dockerfile is read, its
 * HEALTHCHECK script is run against the real program), the systemd install steps, and the README
 * line that reaches the CLI inside the container.
 */
import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { StewardProcess } from "../support/process.ts"

const dockerfile = readFileSync("deploy/Dockerfile", "utf8")
let dataDir: string
let steward: StewardProcess | undefined

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), "steward-container-"))
})
afterEach(async () => {
  if (steward && steward.child.exitCode === null) await steward.kill()
  steward = undefined
  rmSync(dataDir, { recursive: true, force: true })
})

/** The HEALTHCHECK's command as Docker runs it in the image's WORKDIR (here the repository). */
function healthcheck(env: Record<string, string>): Promise<number> {
  const command = JSON.parse(/^HEALTHCHECK [^\n]*\\\n\s+CMD (\[.*\])$/m.exec(dockerfile)![1]!) as string[]
  expect(command[0]).toBe("node")
  return new Promise((resolve) => execFile(process.execPath, command.slice(1), { env: { PATH: process.env.PATH ?? "", DATA_DIR: dataDir, ...env }, timeout: 60_000 }, (error) => resolve(error ? Number(error.code ?? 1) : 0)))
}

const start = (env: Record<string, string>) => StewardProcess.start({ DATA_DIR: dataDir, MODEL: "openai-compatible:unused", OPENAI_COMPATIBLE_BASE_URL: "http://127.0.0.1:9/v1", LOG_LEVEL: "info", ...env })

describe("the container image", () => {
  it("listens on every interface (ADMIN_HOST=0.0.0.0), ships the health check script and puts `steward` on the PATH", () => {
    expect(dockerfile).toMatch(/^ENV [^]*?\bADMIN_HOST=0\.0\.0\.0\b/m)
    expect(dockerfile).toContain("COPY deploy/healthcheck.mjs ./deploy/healthcheck.mjs")
    expect(dockerfile).toContain("ln -s /app/dist/cli.js /usr/local/bin/steward")
  })

  it("HEALTHCHECK passes with ADMIN_PORT=off while Steward runs, and fails once it stopped", async () => {
    steward = start({ ADMIN_PORT: "off" })
    await steward.waitFor((p) => p.logs.some((line) => line.msg === "Steward started"), "start-up", 60_000)
    expect(await healthcheck({ ADMIN_PORT: "off" })).toBe(0)
    await steward.kill()
    expect(await healthcheck({ ADMIN_PORT: "off" })).toBe(1)
  }, 120_000)

  it("HEALTHCHECK asks /healthz when the admin server is on", async () => {
    steward = start({ ADMIN_PORT: "0", ADMIN_HOST: "0.0.0.0" })
    const port = await steward.adminPort()
    expect(await healthcheck({ ADMIN_PORT: String(port) })).toBe(0)
    await steward.kill()
    expect(await healthcheck({ ADMIN_PORT: String(port) })).toBe(1)
  }, 120_000)
})

describe("the install steps", () => {
  it("give the service user its clone before it runs npm ci (systemd)", () => {
    const unit = readFileSync("deploy/steward.service", "utf8")
    const chown = unit.indexOf("chown -R steward:steward /opt/steward")
    expect(chown).toBeGreaterThan(0)
    expect(chown).toBeLessThan(unit.indexOf("sudo -u steward npm ci"))
  })

  it("the README shows the owner CLI inside compose", () => {
    expect(readFileSync("README.md", "utf8")).toContain("docker compose exec steward steward status")
  })
})
