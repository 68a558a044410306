import { setTimeout as sleep } from "node:timers/promises"
import { dataDirOf } from "../config/config.ts"
import { lockState } from "../lock/data-dir-lock.ts"
import type { ControlRecord } from "../store/records.ts"
import type { Store } from "../store/store.ts"
import { CliError } from "./common.ts"

/** The server polls controls every second; this leaves it room on a busy machine. */
const ANSWER_WITHIN_MS = 15_000
const LOOK_EVERY_MS = 200

/**
 * Asks the server for a change it must make itself (it holds triggers and approvals in
 * memory): the control is written, and when a server runs, its answer is awaited and returned.
 * With no server running it waits in the store and applies when Steward next starts.
 */
export async function requestControl(store: Store, kind: ControlRecord["kind"], target: string): Promise<string> {
  const control = await store.requestControl(kind, target)
  const lock = await lockState(dataDirOf())
  if (lock.state !== "held") return `queued: Steward is not running; it applies this when it next starts (${kind} ${target})`
  const deadline = Date.now() + ANSWER_WITHIN_MS
  while (Date.now() < deadline) {
    const seen = await store.control(control.id)
    if (seen?.status === "applied") return seen.result ?? "done"
    if (seen?.status === "refused") throw new CliError(seen.result ?? "refused")
    // Another process answers through the same file: there is nothing to await but the file.
    await sleep(LOOK_EVERY_MS)
  }
  throw new CliError(`the running Steward (pid ${lock.pid ?? "unknown"}) has not applied it within ${ANSWER_WITHIN_MS / 1000} s; it stays queued and applies when it does`)
}
