import type { Button, InboundMessage, TaskRecord, UserId } from "../core/types.ts"

/** A Stop button's id: this prefix and the id of the batch head it stops (well under Telegram's 64 bytes). */
const STOP_ACTION = "stop:"

/** Why a stopped task ended, as its record and the Teller's report say. */
export const STOPPED_BY_BUTTON = "stopped by the user (Stop button)"
/** What the presser of a Stop button is told when there is nothing to stop — the task ended, a
 *  crash or restart came between, or the button names no task of this conversation. */
export const TASK_ENDED = "This task has already ended; there is nothing to stop."
/** What another person in a shared conversation is told on pressing someone's Stop button. */
export const NOT_YOUR_TASK = "Someone else asked for this task; only they can stop it."

/** The button under a status message that stops the batch headed by `headId`. */
export const stopButton = (headId: string): Button => ({ id: `${STOP_ACTION}${headId}`, label: "Stop" })

export const isStopPress = (message: InboundMessage): boolean => message.action?.startsWith(STOP_ACTION) === true

export interface StopDeps {
  /** The task on record in this process (ended ones from before a restart are not). */
  task(id: string): TaskRecord | undefined
  /** TaskBoard.abort: the task and what it committed; false when nothing was left to stop. */
  abort(id: string, reason: string): Promise<boolean>
  isOwner(user: UserId): boolean
}

/**
 * A press of a Stop button: it stops the batch through the same path as /cancel, so the batch
 * ends cancelled and its report wakes the Teller. Only a person the work belongs to (or an owner)
 * may stop it, and only from its own conversation — the platform says who pressed and where, so a
 * press forged into another chat, of another's task, or of a button left from before changes
 * nothing. Returns the note for the presser alone, if there is one.
 */
export async function pressStop(message: InboundMessage, deps: StopDeps): Promise<string | undefined> {
  const id = message.action!.slice(STOP_ACTION.length)
  const head = deps.task(id)
  // A task of another conversation is not named to the presser: it is as good as ended here.
  if (!head || head.conversation !== message.conversation) return TASK_ENDED
  if (head.user !== message.user && !deps.isOwner(message.user)) return NOT_YOUR_TASK
  return (await deps.abort(id, STOPPED_BY_BUTTON)) ? undefined : TASK_ENDED
}
