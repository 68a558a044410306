import type { Logger } from "pino"
import type { ControlRecord } from "../store/records.ts"
import type { Store } from "../store/store.ts"

/** What the running server does for each kind of control; each returns what it says back, or
 *  `{ error }` when it refuses. */
export interface ControlHandlers {
  pauseTrigger(id: string, paused: boolean): Promise<{ done: string } | { error: string }>
  removeTrigger(id: string): Promise<{ done: string } | { error: string }>
  revokeUser(user: string): Promise<{ done: string } | { error: string }>
  /** Stops a queued or running task (and the tasks it committed) and marks it cancelled. */
  cancelTask(id: string): Promise<{ done: string } | { error: string }>
}

/**
 * The owner CLI runs in another process and cannot reach the server's memory; it writes a
 * ControlRecord to the store instead, as `steward event` writes a raised event. The server
 * applies pending controls when it starts and then every `pollMs`, and records each outcome on
 * the record, which the CLI waits for.
 */
export class ControlInbox {
  private timer?: NodeJS.Timeout
  private polling = false

  constructor(
    private readonly store: Store,
    private readonly handlers: ControlHandlers,
    private readonly log: Logger,
    private readonly pollMs = 1000,
  ) {}

  /** Applies every pending control, oldest first; then keeps polling. */
  async start(): Promise<void> {
    await this.applyPending()
    this.timer = setInterval(() => {
      if (this.polling) return
      this.polling = true
      this.applyPending()
        .catch((error) => this.log.error({ err: error }, "could not apply the owner's controls"))
        .finally(() => (this.polling = false))
    }, this.pollMs)
  }

  stop(): void {
    clearInterval(this.timer)
  }

  async applyPending(): Promise<void> {
    for (const control of await this.store.owner.pendingControls()) {
      const outcome = await this.apply(control).catch((error: unknown) => ({ error: error instanceof Error ? error.message : String(error) }))
      const settled: ControlRecord = "error" in outcome ? { ...control, status: "refused", result: outcome.error } : { ...control, status: "applied", result: outcome.done }
      await this.store.owner.settleControl(settled)
      this.log.info({ control: settled }, `owner control ${control.kind} ${control.target}: ${settled.result}`)
    }
  }

  private apply(control: ControlRecord): Promise<{ done: string } | { error: string }> {
    switch (control.kind) {
      case "trigger.pause": return this.handlers.pauseTrigger(control.target, true)
      case "trigger.resume": return this.handlers.pauseTrigger(control.target, false)
      case "trigger.remove": return this.handlers.removeTrigger(control.target)
      case "user.revoke": return this.handlers.revokeUser(control.target)
      case "task.cancel": return this.handlers.cancelTask(control.target)
    }
  }
}
