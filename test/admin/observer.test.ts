import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pino from "pino"
import { afterEach, expect, it } from "vitest"
import { Metrics } from "../../src/admin/metrics.ts"
import { startApp, type App } from "../../src/app.ts"
import { loadConfig } from "../../src/config/config.ts"
import { ListMemory, TestChannel } from "../support/harness.ts"

let app: App | undefined
let dataDir: string | undefined
afterEach(async () => {
  await app?.stop()
  if (dataDir) rmSync(dataDir, { recursive: true, force: true })
})

it("counts a platform event delivered again as one dedupe hit", async () => {
  dataDir = mkdtempSync(join(tmpdir(), "steward-observer-"))
  const channel = new TestChannel()
  const metrics = new Metrics()
  // The turns fail (nothing listens on the model's port); the gate's count is what is looked at.
  const config = loadConfig({ DATA_DIR: dataDir, MODEL: "openai-compatible:none", OPENAI_COMPATIBLE_BASE_URL: "http://127.0.0.1:9/v1", MODEL_MAX_RETRIES: "0" })
  config.allowedUsers = { anyone: false, users: new Set(["test:u1"]) }
  app = await startApp(config, pino({ level: "silent" }), [channel], new ListMemory(), undefined, { metrics })
  await channel.say("hello", "test:c1", "test:u1", { eventId: "test:1" })
  await channel.say("hello", "test:c1", "test:u1", { eventId: "test:1" })
  await channel.say("hello again", "test:c1", "test:u1", { eventId: "test:2" })
  expect((await metrics.dedupeHits.get()).values[0]?.value).toBe(1)
})
