import { z } from "zod"

/** The field types of Steward's environment: each a zod schema whose failure message says what
 *  was expected, so a bad variable is reported as one line naming it (see loadConfig). */

export const PROVIDERS = ["openai", "anthropic", "openai-compatible"] as const
export type Provider = (typeof PROVIDERS)[number]

export interface AllowedUsers {
  anyone: boolean
  /** `<channel>:<user-id>` entries, e.g. `telegram:1001`. */
  users: Set<string>
}

export const MODEL_EXPECTED = `expected <provider>:<model-id>, e.g. openai:gpt-4.1-mini (providers: ${PROVIDERS.join(", ")})`

export function wholeNumber(min: number, max?: number) {
  const expected =
    max === undefined ? `expected a whole number of at least ${min}` : `expected a whole number from ${min} to ${max}`
  // Number() alone would accept "1e3", "4.5", " " and "0x10"; only plain digits are a whole decimal number.
  return z
    .string()
    .regex(/^\d+$/, expected)
    .transform(Number)
    .pipe(z.int(expected).min(min, expected).max(max ?? Number.MAX_SAFE_INTEGER, expected))
}

export const port = () => wholeNumber(1, 65535)
export const httpUrl = () => z.url({ protocol: /^https?$/, error: "expected an http(s) URL" })

export const modelSpec = z
  .string()
  .regex(new RegExp(`^(${PROVIDERS.join("|")}):.+$`, "s"), MODEL_EXPECTED)
  .transform((value) => {
    // Only the first colon separates the provider: model ids like qwen2.5:7b contain colons.
    const at = value.indexOf(":")
    return { provider: value.slice(0, at) as Provider, id: value.slice(at + 1) }
  })

const ALLOWED_USERS_EXPECTED =
  "expected a comma-separated list of <channel>:<user-id>, e.g. telegram:1001,slack:U1001,console:local, or * for anyone"

/** What a user id looks like in each channel Steward has: a mistyped id would never match
 *  anyone, and the owner would be treated as a stranger without knowing why. */
const USER_IDS: Record<string, { id: RegExp; expected: string }> = {
  telegram: { id: /^\d+$/, expected: "a Telegram user id is a number, e.g. telegram:1001" },
  slack: { id: /^[UW][A-Z0-9]+$/, expected: "a Slack user id starts with U or W, e.g. slack:U1001" },
  console: { id: /^local$/, expected: "the console's one user is console:local" },
}

/** Why `entry` (`<channel>:<user-id>`) is not a user Steward could ever see, or undefined. */
function badUser(entry: string): string | undefined {
  const at = entry.indexOf(":")
  if (at <= 0) return ALLOWED_USERS_EXPECTED
  const rule = USER_IDS[entry.slice(0, at)]
  if (!rule) return `the channel must be one of ${Object.keys(USER_IDS).join(", ")}`
  return rule.id.test(entry.slice(at + 1)) ? undefined : rule.expected
}

export const allowedUsers = z.string().transform((value, ctx): AllowedUsers => {
  const entries = value
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "")
  if (entries.length === 0) {
    ctx.addIssue({ code: "custom", message: ALLOWED_USERS_EXPECTED })
    return z.NEVER
  }
  const result: AllowedUsers = { anyone: false, users: new Set() }
  for (const entry of entries) {
    const problem = entry === "*" ? undefined : badUser(entry)
    if (problem) {
      // Name the offending entry: in a long list the whole value would hide it.
      ctx.addIssue({ code: "custom", message: problem, params: { got: `entry ${JSON.stringify(entry)}` } })
      return z.NEVER
    }
    if (entry === "*") result.anyone = true
    else result.users.add(entry)
  }
  return result
})

/** A connection URL with its password replaced by `***` (in `user:password@` and in a
 *  `password=` parameter), for error and log lines; by text, so a malformed URL is redacted too. */
export function redactUrl(text: string): string {
  return text.replace(/^((?:[a-z][a-z0-9+.-]*:\/\/)?[^:/@\s]*:).*@/i, "$1***@").replace(/([?&]password=)[^&]*/gi, "$1***")
}

const STORE_URL_EXPECTED = "expected postgres://user:password@host:port/database (or empty for SQLite in DATA_DIR)"

/** Where the state lives: "" keeps SQLite in DATA_DIR; a Postgres URL moves it to that database. */
export const storeUrl = z.string().transform((value, ctx) => {
  if (URL.canParse(value) && /^postgres(ql)?:$/.test(new URL(value).protocol)) return value
  // The value may hold a password: the error shows it redacted, never as given.
  ctx.addIssue({ code: "custom", message: STORE_URL_EXPECTED, params: { got: JSON.stringify(redactUrl(value)) } })
  return z.NEVER
})

/** A token that must look like `pattern`: refused before any request is made, showing the form
 *  expected and only the first characters of what was given (it is a secret). */
export function tokenLike(pattern: RegExp, expected: string) {
  return z.string().transform((value, ctx) => {
    if (pattern.test(value)) return value
    const shown = value.length > 6 ? `${value.slice(0, 6)}…` : value
    ctx.addIssue({ code: "custom", message: expected, params: { got: `${JSON.stringify(shown)} (${value.length} characters)` } })
    return z.NEVER
  })
}

// BotFather's form: the bot's numeric id, a colon, the secret part.
export const telegramToken = tokenLike(/^\d+:[A-Za-z0-9_-]+$/, "expected <bot id>:<secret> as @BotFather gives it, e.g. 123456789:AAE…")
export const slackBotToken = tokenLike(/^xoxb-\S+$/, "expected the Bot User OAuth Token, which starts with xoxb- (OAuth & Permissions)")
export const slackAppToken = tokenLike(/^xapp-\S+$/, "expected an app-level token, which starts with xapp- (Basic Information → App-Level Tokens)")
