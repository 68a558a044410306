import { isTimeZone } from "../schedule/cron.ts"

const SLACK_BOT = "expected the Bot User OAuth Token (xoxb-…)"
const TELEGRAM_BOT = "expected the token @BotFather gave (<bot id>:<secret>)"
/** A setting of a chat platform that means nothing without another: set alone, it is a half-done
 *  set-up, refused rather than silently ignored (Steward would start on the console instead). */
const NEEDS: Array<{ variable: string; needs: string; expected: string }> = [
  { variable: "SLACK_APP_TOKEN", needs: "SLACK_BOT_TOKEN", expected: SLACK_BOT },
  { variable: "SLACK_SIGNING_SECRET", needs: "SLACK_BOT_TOKEN", expected: SLACK_BOT },
  { variable: "TELEGRAM_WEBHOOK_URL", needs: "TELEGRAM_BOT_TOKEN", expected: TELEGRAM_BOT },
  { variable: "TELEGRAM_WEBHOOK_SECRET", needs: "TELEGRAM_BOT_TOKEN", expected: TELEGRAM_BOT },
  { variable: "TELEGRAM_WEBHOOK_SECRET", needs: "TELEGRAM_WEBHOOK_URL", expected: "expected the public https URL Telegram posts updates to (or unset TELEGRAM_WEBHOOK_SECRET for long polling)" },
]

/** The first variable a half-set platform is missing, with what it should hold, or undefined.
 *  `present` holds only the variables set to a non-empty value. */
export function halfSetPlatform(present: Record<string, string | undefined>): { variable: string; expected: string } | undefined {
  for (const rule of NEEDS) {
    if (present[rule.variable] !== undefined && present[rule.needs] === undefined) return { variable: rule.needs, expected: `${rule.expected}, because ${rule.variable} is set` }
  }
  return undefined
}

/** A POSIX TZ rule without daylight saving: a name (`UTC`, `<+03>`) and the hours WEST of UTC. */
const POSIX_FIXED = /^(?:[A-Za-z]{3,}|<[A-Za-z0-9+-]{1,10}>)([+-]?)(\d{1,2})(?::(\d{2}))?$/
const EXPECTED = "expected an IANA time zone, e.g. Europe/Berlin (or unset TZ and set DEFAULT_TIMEZONE)"

/**
 * The server's own zone, the default for users who set none. A `TZ` the system cannot read
 * (`Mars/Olympus`) leaves Node with no zone at all, and every date the agents see would say
 * "undefined": refused like any bad variable. `:`-prefixed values are the C library's file form.
 * A POSIX rule with a fixed offset (`UTC0`, `<+03>-3`), which the C library reads but Node's ICU
 * does not, is the Etc/GMT zone of that offset (POSIX and Etc/GMT both count hours west of UTC);
 * a rule with daylight saving (`CET-1CEST,M3.5.0,…`) would need its rules re-implemented, so it is
 * refused, asking for the place's name. An unset or empty TZ on a system whose zone ICU cannot
 * name (`Etc/Unknown`, as with `TZ=` or no /etc/localtime) is UTC, which is what the C library uses then.
 */
export function serverTimeZone(tz: string | undefined, resolved = Intl.DateTimeFormat().resolvedOptions().timeZone as string | undefined): { zone: string } | { error: string } {
  const system = resolved !== undefined && isTimeZone(resolved) ? resolved : "UTC"
  if (tz === undefined || tz.startsWith(":/")) return { zone: system }
  const name = tz.startsWith(":") ? tz.slice(1) : tz
  if (isTimeZone(name)) return { zone: name }
  const posix = POSIX_FIXED.exec(name)
  if (posix) {
    const [, sign, hours, minutes] = posix
    if (minutes !== undefined && minutes !== "00") return { error: `TZ: ${EXPECTED}; a POSIX offset of part of an hour has no Etc/GMT zone, got ${JSON.stringify(tz)}` }
    const west = Number(hours)
    if (west === 0) return { zone: "UTC" }
    if (west <= 14) return { zone: `Etc/GMT${sign === "-" ? "-" : "+"}${west}` }
  }
  const rule = /[,]|\d[A-Za-z<]/.test(name) ? "; a POSIX rule with daylight saving is not read: name the place instead" : ""
  return { error: `TZ: ${EXPECTED}${rule}, got ${JSON.stringify(tz)}` }
}

/** This process's zone as serverTimeZone reads TZ, for what shows times without a user's zone;
 *  UTC when TZ is refused (start-up has refused it already). */
export function systemTimeZone(): string {
  const server = serverTimeZone(process.env.TZ || undefined)
  return "zone" in server ? server.zone : "UTC"
}
