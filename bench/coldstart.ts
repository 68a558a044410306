/**
 * cold_start_ms: from spawning `node dist/main.js` (console channel, a scripted model on
 * 127.0.0.1, a fresh DATA_DIR) to its first `GET /healthz` answered 200 — store open, channels
 * connected, admin server up. The median of several starts; dist/ is built first.
 */
import { execFileSync, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { byRole, startModelServer } from "../test/fakes/model-server.ts"
import type { Figures } from "./figures.ts"

const ROOT = fileURLToPath(new URL("..", import.meta.url))
const RUNS = 7

export async function runColdStartBench(figures: Figures): Promise<void> {
  execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: ROOT, stdio: "inherit" })
  const model = await startModelServer(byRole({ teller: () => ({ text: "" }) }))
  try {
    const times: number[] = []
    for (let i = 0; i < RUNS; i++) times.push(await coldStart(model.url))
    times.sort((a, b) => a - b)
    figures.add("cold_start_ms", times[Math.floor(RUNS / 2)]!, "ms", "<= 1000")
  } finally {
    await model.close()
  }
}

async function coldStart(modelUrl: string): Promise<number> {
  const dataDir = mkdtempSync(join(tmpdir(), "steward-bench-coldstart-"))
  const began = performance.now()
  const child = spawn(process.execPath, ["dist/main.js"], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", DATA_DIR: dataDir, MODEL: "openai-compatible:scripted", OPENAI_COMPATIBLE_BASE_URL: modelUrl, ADMIN_PORT: "0", LOG_LEVEL: "info" },
    stdio: ["pipe", "ignore", "pipe"],
  })
  try {
    const port = await adminPort(child.stderr)
    for (;;) {
      const status = await fetch(`http://127.0.0.1:${port}/healthz`).then((response) => response.status, () => 0)
      if (status === 200) return performance.now() - began
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
  } finally {
    child.kill("SIGKILL")
    await new Promise((resolve) => child.once("exit", resolve))
    rmSync(dataDir, { recursive: true, force: true })
  }
}

/** The admin port from the "Steward started" log line; rejects if the program ends first. */
export function adminPort(stderr: NodeJS.ReadableStream): Promise<number> {
  return new Promise((resolve, reject) => {
    let text = ""
    stderr.setEncoding("utf8")
    stderr.on("data", (chunk: string) => {
      text += chunk
      const started = text.split("\n").find((line) => line.includes('"msg":"Steward started"'))
      if (started) resolve((JSON.parse(started) as { adminPort: number }).adminPort)
    })
    stderr.on("end", () => reject(new Error(`Steward ended before it started: ${text}`)))
  })
}
