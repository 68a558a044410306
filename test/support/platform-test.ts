import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { ModelServer } from "../fakes/model-server.ts"
import type { StewardProcess } from "./process.ts"

/** What an end-to-end test of one platform starts on: the platform's fake API and a data folder. */
export interface PlatformTest<Api> {
  api: Api
  dataDir: string
}

/** Starts the fake API (the Bot API, Slack's Web API) and makes a fresh data folder named for the test file. */
export async function platformTest<Api>(startApi: () => Promise<Api>, name: string): Promise<PlatformTest<Api>> {
  return { api: await startApi(), dataDir: mkdtempSync(join(tmpdir(), `steward-${name}-`)) }
}

/** After the test: Steward first (in this process, or the built program still running), then
 *  the model server, the fake API and the data folder. */
export async function endPlatformTest(test: PlatformTest<{ close(): Promise<void> }>, started: { app?: { stop(): Promise<void> }; steward?: StewardProcess; models?: ModelServer }): Promise<void> {
  await started.app?.stop()
  if (started.steward && started.steward.child.exitCode === null) await started.steward.kill()
  await started.models?.close()
  await test.api.close()
  rmSync(test.dataDir, { recursive: true, force: true })
}
