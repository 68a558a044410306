import type { SocketModeReceiver } from "@slack/bolt"
import type { Logger } from "pino"
import type { ConnectionHealth } from "../health/connection.ts"

/** How long a Socket Mode connection may carry nothing before it is taken for dead. Slack asks
 *  a healthy connection to refresh every few hours, so a quiet one is restarted at most a few
 *  times a day for nothing — a cheap price for not missing messages on a stuck one. */
export const SOCKET_SILENCE_MS = 30 * 60_000

type SocketModeClient = SocketModeReceiver["client"]

/**
 * The Socket Mode client reconnects when its socket closes or stops answering pings, but a
 * connection can look open while Slack sends nothing down it. This restarts the client when
 * it claims to be connected and no envelope (event, interaction, hello) arrived for `silenceMs`.
 */
export class SocketWatchdog {
  private connected = false
  private restarting = false
  private stopped = false
  private readonly timer: NodeJS.Timeout

  constructor(
    private readonly client: SocketModeClient,
    private readonly log: Logger,
    /** What /healthz reports: the socket's state as the client tells it. */
    private readonly connection: ConnectionHealth,
    private readonly silenceMs = SOCKET_SILENCE_MS,
  ) {
    this.timer = setTimeout(() => void this.check(), silenceMs).unref()
    client.on("connected", this.heard)
    client.on("slack_event", this.heard)
    for (const state of ["connecting", "reconnecting", "disconnecting", "disconnected"]) client.on(state, this.lost)
  }

  stop(): void {
    this.stopped = true
    clearTimeout(this.timer)
    this.client.off("connected", this.heard)
    this.client.off("slack_event", this.heard)
    for (const state of ["connecting", "reconnecting", "disconnecting", "disconnected"]) this.client.off(state, this.lost)
  }

  private heard = (): void => {
    this.connected = true
    this.connection.up()
    this.timer.refresh()
  }

  private lost = (): void => {
    this.connected = false
    this.connection.down("the Socket Mode connection to Slack is not open; reconnecting")
  }

  private async check(): Promise<void> {
    // Not connected: the client is reconnecting on its own and needs no help.
    if (!this.connected || this.restarting) return void this.timer.refresh()
    this.restarting = true
    this.log.info({ silentForMs: this.silenceMs }, "Socket Mode connection carried nothing for too long; restarting it")
    try {
      await this.client.disconnect()
      // Stopped meanwhile: the receiver's own stop already disconnected, and it must stay so.
      if (!this.stopped) await this.client.start()
    } catch (error) {
      this.log.error({ err: error }, "could not restart the Socket Mode connection; trying again later")
    } finally {
      this.restarting = false
      if (!this.stopped) this.timer.refresh()
    }
  }
}
