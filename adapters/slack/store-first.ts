import type { App, Receiver, ReceiverEvent } from "@slack/bolt"

/**
 * Acknowledges a Slack event or interaction only once the core has stored it. Bolt acknowledges
 * an Events API event before its listeners run, and a listener acknowledges an interaction when
 * it likes; here every acknowledgement is held until Bolt's processing of the event succeeded —
 * the listener handed the message to the core and the core stored it — and dropped when it
 * failed, so Slack delivers the event again (Socket Mode: an envelope not acknowledged is sent
 * again; over HTTP the receiver answers 500).
 */
export class StoreFirstReceiver<R extends Receiver> implements Receiver {
  constructor(readonly inner: R) {}

  init(app: App): void {
    // The inner receiver sees the app with processEvent wrapped; everything else is the app's.
    const wrapped = Object.create(app) as App
    wrapped.processEvent = (event) => this.process(app, event)
    this.inner.init(wrapped)
  }

  start(...args: unknown[]): Promise<unknown> {
    return (this.inner.start as (...a: unknown[]) => Promise<unknown>)(...args)
  }

  stop(...args: unknown[]): Promise<unknown> {
    return (this.inner.stop as (...a: unknown[]) => Promise<unknown>)(...args)
  }

  private async process(app: App, event: ReceiverEvent): Promise<void> {
    let acknowledged: { response?: unknown } | undefined
    await app.processEvent({ ...event, ack: async (response?: unknown) => void (acknowledged = { response }) })
    // Bolt acknowledges events itself; an interaction whose listener did not is acknowledged too.
    await event.ack(acknowledged?.response as never)
  }
}
