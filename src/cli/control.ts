import { dataDirOf } from "../config/config.ts"
import { awaitControl } from "../control/await-control.ts"
import { lockState } from "../lock/data-dir-lock.ts"
import type { ControlRecord } from "../store/records.ts"
import type { Store } from "../store/store.ts"
import { CliError } from "./common.ts"

/** The server polls controls every second; this leaves it room on a busy machine. */
const ANSWER_WITHIN_MS = 15_000

/**
 * Asks the server for a change it must make itself (it holds triggers and approvals in
 * memory): the control is written, and when a server runs, its answer is awaited and returned.
 * With no server running it waits in the store and applies when Steward next starts.
 */
export async function requestControl(store: Store, kind: ControlRecord["kind"], target: string): Promise<string> {
  const control = await store.owner.requestControl(kind, target)
  const lock = await lockState(dataDirOf())
  if (lock.state !== "held") return `queued: Steward is not running; it applies this when it next starts (${kind} ${target})`
  const seen = await awaitControl(store, control.id, ANSWER_WITHIN_MS)
  if (seen?.status === "applied") return seen.result ?? "done"
  if (seen?.status === "refused") throw new CliError(seen.result ?? "refused")
  throw new CliError(`the running Steward (pid ${lock.pid ?? "unknown"}) has not applied it within ${ANSWER_WITHIN_MS / 1000} s; it stays queued and applies when it does`)
}
