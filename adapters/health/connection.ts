import type { ChannelHealth } from "../../src/channel/channel.ts"

/**
 * An adapter's connection to its platform as /healthz and /metrics see it: up or down (and
 * why), and how often it came back after it was lost.
 */
export class ConnectionHealth {
  private state: ChannelHealth = { ok: false, reason: "not connected yet", reconnects: 0 }
  private wasUp = false

  up(): void {
    if (this.state.ok) return
    if (this.wasUp) this.state.reconnects++
    this.wasUp = true
    this.state = { ok: true, reconnects: this.state.reconnects }
  }

  down(reason: string): void {
    this.state = { ok: false, reason, reconnects: this.state.reconnects }
  }

  get ok(): boolean {
    return this.state.ok
  }

  health(): ChannelHealth {
    return { ...this.state }
  }
}
