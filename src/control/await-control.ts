import { setTimeout as sleep } from "node:timers/promises"
import type { ControlRecord } from "../store/records.ts"
import type { Store } from "../store/store.ts"

/** How often the record is read again while waiting: the server applies controls every second. */
const LOOK_EVERY_MS = 200

/**
 * Waits for the running server to apply or refuse a control written to the store, for at most
 * `withinMs`; resolves with the record as last read (still `pending` when time ran out). The
 * owner CLI and the console ask the same way: the leader, wherever it runs, applies it.
 */
export async function awaitControl(store: Store, id: string, withinMs: number): Promise<ControlRecord | undefined> {
  const deadline = Date.now() + withinMs
  for (;;) {
    const seen = await store.owner.control(id)
    if (seen?.status !== "pending" || Date.now() + LOOK_EVERY_MS > deadline) return seen
    // The server may be another process: there is nothing to await but the store.
    await sleep(LOOK_EVERY_MS)
  }
}
