/**
 * Times as a user reads them: in their own IANA zone. Formatters are cached per zone, since
 * creating one is slow and a handful of zones serve every user.
 */
const formatters = new Map<string, { local: Intl.DateTimeFormat; short: Intl.DateTimeFormat; offset: Intl.DateTimeFormat }>()

function formattersOf(zone: string) {
  let found = formatters.get(zone)
  if (!found) {
    found = {
      local: new Intl.DateTimeFormat("en-GB", { timeZone: zone, dateStyle: "full", timeStyle: "long" }),
      short: new Intl.DateTimeFormat("en-GB", { timeZone: zone, weekday: "short", day: "numeric", month: "short", year: "numeric", hour: "2-digit", minute: "2-digit", hourCycle: "h23" }),
      offset: new Intl.DateTimeFormat("en-US", { timeZone: zone, timeZoneName: "longOffset", year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23" }),
    }
    formatters.set(zone, found)
  }
  return found
}

/** "Wednesday 25 November 2026 at 19:54:17 CET": the date the agents see. */
export function longLocalTime(at: Date, zone: string): string {
  return formattersOf(zone).local.format(at)
}

/** "Wed, 25 Nov 2026, 19:54 (Europe/Berlin)": a time shown to the user in a listing. */
export function shortLocalTime(at: Date | string, zone: string): string {
  const date = typeof at === "string" ? new Date(at) : at
  return `${formattersOf(zone).short.format(date)} (${zone})`
}

/** ISO 8601 with the zone's offset at that moment, e.g. "2026-11-25T19:54:17+01:00". */
export function isoInZone(at: Date, zone: string): string {
  const parts = Object.fromEntries(formattersOf(zone).offset.formatToParts(at).map((part) => [part.type, part.value]))
  // "GMT" alone is a zero offset; otherwise "GMT+05:30".
  const offset = parts.timeZoneName === "GMT" ? "+00:00" : parts.timeZoneName!.slice(3)
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}${offset}`
}
