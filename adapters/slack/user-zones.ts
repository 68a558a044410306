import type { webApi } from "@slack/bolt"
import type { Logger } from "pino"

/** A user's zone is asked again after this long: people travel and change their profile. */
const ZONE_TTL_MS = 6 * 3600_000

/**
 * Slack users' time zones (`users.info` → `user.tz`, an IANA name), cached per user so a
 * conversation costs one lookup every few hours, not one per message. A failed lookup (no
 * `users:read` scope, Slack down) gives no zone: the core then uses the user's own setting
 * or DEFAULT_TIMEZONE, and the message is not held up.
 */
export class SlackUserZones {
  private zones = new Map<string, { zone: string | undefined; until: number }>()
  private warned = false

  constructor(
    private readonly web: webApi.WebClient,
    private readonly log: Logger,
  ) {}

  /** `slackUser` is Slack's id (U…), without Steward's `slack:` prefix. */
  async zoneOf(slackUser: string): Promise<string | undefined> {
    const known = this.zones.get(slackUser)
    if (known && known.until > Date.now()) return known.zone
    try {
      const info = await this.web.users.info({ user: slackUser })
      const zone = typeof info.user?.tz === "string" && info.user.tz !== "" ? info.user.tz : undefined
      this.zones.set(slackUser, { zone, until: Date.now() + ZONE_TTL_MS })
      return zone
    } catch (error) {
      // Said once: without users:read every message would log it.
      if (!this.warned) this.log.warn({ err: error }, "could not read a Slack user's time zone (users.info; is the users:read scope granted?)")
      this.warned = true
      return known?.zone
    }
  }
}
