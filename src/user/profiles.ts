import type { Logger } from "pino"
import type { UserId } from "../core/types.ts"
import { isTimeZone } from "../schedule/cron.ts"
import type { ProfileRecord } from "../store/collections.ts"
import type { Store } from "../store/store.ts"

/**
 * What Steward keeps about each user besides their memory: for now their time zone. A zone the
 * user set (`/timezone`, the `set_timezone` tool) wins over the one their platform reports
 * (Slack's profile zone, refreshed with every message); without either, DEFAULT_TIMEZONE.
 * All profiles are read at start-up, so the zone of a user is known without waiting.
 */
export class Profiles {
  private profiles = new Map<UserId, ProfileRecord>()

  constructor(
    private readonly store: Store,
    private readonly defaultZone: string,
    private readonly log: Logger,
  ) {}

  async load(): Promise<void> {
    for (const profile of await this.store.users.profiles()) this.profiles.set(profile.user, profile)
  }

  /** The user's IANA zone, or DEFAULT_TIMEZONE. */
  timeZoneOf(user: UserId): string {
    return this.profiles.get(user)?.timeZone ?? this.defaultZone
  }

  /** Where the user's zone comes from, for /timezone. */
  sourceOf(user: UserId): "user" | "platform" | "default" {
    return this.profiles.get(user)?.timeZoneSource ?? "default"
  }

  /** The user chose a zone. Returns an error text for a name that is not an IANA zone. */
  async setTimeZone(user: UserId, zone: string): Promise<{ error: string } | { timeZone: string }> {
    const name = zone.trim()
    if (!isTimeZone(name)) return { error: `"${name}" is not an IANA time zone name (e.g. Europe/Berlin, America/New_York, Asia/Kolkata)` }
    // Written as Intl spells it, so "europe/berlin" and "Europe/Berlin" are one zone.
    const canonical = new Intl.DateTimeFormat("en-US", { timeZone: name }).resolvedOptions().timeZone
    await this.save({ ...this.profiles.get(user), user, timeZone: canonical, timeZoneSource: "user", updatedAt: new Date().toISOString() })
    return { timeZone: canonical }
  }

  /** The platform reported the user's zone: kept unless the user chose one; bad names ignored. */
  async platformTimeZone(user: UserId, zone: string): Promise<void> {
    const known = this.profiles.get(user)
    if (known?.timeZoneSource === "user" || known?.timeZone === zone) return
    if (!isTimeZone(zone)) return void this.log.warn({ user, zone }, "the platform reported a time zone that is not an IANA name; ignored")
    await this.save({ ...known, user, timeZone: zone, timeZoneSource: "platform", updatedAt: new Date().toISOString() })
  }

  private async save(profile: ProfileRecord): Promise<void> {
    await this.store.save({ profiles: [profile] })
    this.profiles.set(profile.user, profile)
  }
}
