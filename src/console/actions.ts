import { z } from "zod"
import { awaitControl } from "../control/await-control.ts"
import { TERMINAL } from "../core/types.ts"
import type { ControlRecord } from "../store/records.ts"
import type { Store } from "../store/store.ts"

/** `POST /console/schedules/<id>/pause`, `…/resume`, `POST /console/tasks/<id>/cancel`. */
const ACTION_PATH = /^\/console\/(schedules|tasks)\/([^/]+)\/(pause|resume|cancel)$/
/** Task and trigger ids are ULIDs; anything else names nothing. */
const ActionTarget = z.object({
  collection: z.enum(["schedules", "tasks"]),
  id: z.string().regex(/^[0-9A-Za-z]{1,64}$/),
  verb: z.enum(["pause", "resume", "cancel"]),
})

/** The console's answer to an action: the HTTP status and what it says. */
export interface ActionOutcome {
  status: number
  body: { result: string } | { error: string }
}

/** How long a button waits for the running Steward to apply the change (it does within a second). */
const ANSWER_WITHIN_MS = 10_000

export function isActionPath(path: string): boolean {
  return ACTION_PATH.test(path)
}

/**
 * Runs a console button: the change is written to the store as an owner control — the same one
 * `steward trigger pause` and `steward task cancel` write — and the Steward process that leads
 * applies it; the answer is awaited, so the button reports what happened.
 */
export async function runAction(store: Store, path: string): Promise<ActionOutcome> {
  const [, collection, id, verb] = ACTION_PATH.exec(path) ?? []
  const parsed = ActionTarget.safeParse({ collection, id, verb })
  if (!parsed.success) return { status: 404, body: { error: "no such action" } }
  const target = parsed.data
  let kind: ControlRecord["kind"]
  if (target.collection === "schedules" && target.verb !== "cancel") {
    const trigger = await store.schedules.trigger(target.id)
    if (!trigger) return { status: 404, body: { error: `no schedule ${target.id}` } }
    kind = target.verb === "pause" ? "trigger.pause" : "trigger.resume"
  } else if (target.collection === "tasks" && target.verb === "cancel") {
    const task = await store.task(target.id)
    if (!task) return { status: 404, body: { error: `no task ${target.id}` } }
    if (TERMINAL.has(task.status)) return { status: 409, body: { error: `task ${task.id} has already ended (${task.status})` } }
    kind = "task.cancel"
  } else {
    return { status: 404, body: { error: "no such action" } }
  }
  const control = await store.owner.requestControl(kind, target.id)
  const seen = await awaitControl(store, control.id, ANSWER_WITHIN_MS)
  if (seen?.status === "applied") return { status: 200, body: { result: seen.result ?? "done" } }
  if (seen?.status === "refused") return { status: 409, body: { error: seen.result ?? "refused" } }
  return { status: 202, body: { result: `asked; Steward has not applied it within ${ANSWER_WITHIN_MS / 1000} s and will when it can` } }
}
