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

/**
 * The server's own zone, the default for users who set none. A `TZ` the system cannot read
 * (`Mars/Olympus`) leaves Node with no zone at all, and every date the agents see would say
 * "undefined": refused like any bad variable. `:`-prefixed values are the C library's file form.
 */
export function serverTimeZone(tz: string | undefined): { zone: string } | { error: string } {
  const resolved = Intl.DateTimeFormat().resolvedOptions().timeZone as string | undefined
  if (tz === undefined) return { zone: resolved ?? "UTC" }
  if (tz.startsWith(":/")) return { zone: resolved ?? "UTC" }
  const name = tz.startsWith(":") ? tz.slice(1) : tz
  if (!isTimeZone(name)) return { error: `TZ: expected an IANA time zone, e.g. Europe/Berlin (or unset TZ and set DEFAULT_TIMEZONE), got ${JSON.stringify(tz)}` }
  return { zone: name }
}
