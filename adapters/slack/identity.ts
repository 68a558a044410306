import { webApi } from "@slack/bolt"
import { ConfigError } from "../../src/config/config.ts"

export type SlackIdentity = Awaited<ReturnType<webApi.WebClient["auth"]["test"]>>

/** Answers to auth.test that say the token itself is refused: no retry will change them. */
const REFUSED = new Set(["invalid_auth", "not_authed", "token_revoked", "token_expired", "account_inactive", "not_allowed_token_type"])

/**
 * Who the bot is (auth.test), asked once without retries: a token Slack refuses is
 * configuration (ConfigError naming SLACK_BOT_TOKEN, exit 2); Slack out of reach, or any other
 * failure, is told as `unreachable` with the URL tried, for the caller to try again later.
 */
export async function identify(web: webApi.WebClient, apiUrl: string): Promise<{ me: SlackIdentity } | { unreachable: string }> {
  try {
    return { me: await web.auth.test() }
  } catch (error) {
    const refused = refusedToken(error, "SLACK_BOT_TOKEN", "copy the Bot User OAuth Token (xoxb-…) from the app's OAuth & Permissions page again")
    if (refused) throw refused
    return { unreachable: `could not reach Slack at ${apiUrl}auth.test: ${networkReason(error)}` }
  }
}

/** The ConfigError for `variable` when `error` is Slack refusing the token itself, else undefined. */
export function refusedToken(error: unknown, variable: string, fix: string): ConfigError | undefined {
  const code = (error as Partial<webApi.WebAPIPlatformError> | undefined)?.data?.error
  if (typeof code !== "string" || !REFUSED.has(code)) return undefined
  return new ConfigError(variable, `${variable} was refused by Slack (${code}): ${fix}`)
}

/** The system's code (ECONNREFUSED, ENOTFOUND…) under the client's and fetch's wrappers, else
 *  the outermost message. */
function networkReason(error: unknown): string {
  for (let at = error as { code?: unknown; original?: unknown; cause?: unknown } | undefined, depth = 0; at && depth < 5; depth++) {
    if (typeof at.code === "string" && /^E[A-Z]+$/.test(at.code)) return at.code
    at = (at.original ?? at.cause) as typeof at
  }
  return error instanceof Error ? error.message : String(error)
}
