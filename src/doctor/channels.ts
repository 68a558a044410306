import type { Config } from "../config/config.ts"
import { CHECK_TIMEOUT_MS, failed, passed, reason, type Check } from "./check.ts"

/** Telegram's `getMe`: the bot token works and names the bot. */
export async function checkTelegram(telegram: Config["telegram"]): Promise<Check> {
  const root = (telegram.apiRoot ?? "https://api.telegram.org").replace(/\/+$/, "")
  try {
    const response = await fetch(`${root}/bot${telegram.botToken}/getMe`, { signal: AbortSignal.timeout(CHECK_TIMEOUT_MS) })
    const body = (await response.json().catch(() => ({}))) as { ok?: boolean; result?: { username?: string }; description?: string }
    if (response.status === 401 || response.status === 404) return failed("telegram", "TELEGRAM_BOT_TOKEN was rejected", "copy the bot's token from @BotFather (/token) into TELEGRAM_BOT_TOKEN")
    if (!body.ok) return failed("telegram", `getMe answered ${response.status}: ${body.description ?? "no description"}`, "try again later, or check TELEGRAM_API_ROOT")
    return passed("telegram", `the token works for @${body.result?.username ?? "?"}`)
  } catch (error) {
    return failed("telegram", `could not reach ${root}: ${reason(error)}`, "check this machine's network (and TELEGRAM_API_ROOT when set)")
  }
}

async function slackCall(root: string, method: string, token: string): Promise<{ ok?: boolean; error?: string; team?: string; user?: string }> {
  const response = await fetch(`${root}${method}`, { method: "POST", headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(CHECK_TIMEOUT_MS) })
  return (await response.json().catch(() => ({ ok: false, error: `HTTP ${response.status}` }))) as { ok?: boolean; error?: string }
}

/** Slack's `auth.test` for the bot token and, in Socket Mode, `apps.connections.open` for the
 *  app token (it hands out a connection address and opens nothing). */
export async function checkSlack(slack: Config["slack"]): Promise<Check[]> {
  const root = (slack.apiUrl ?? "https://slack.com/api/").replace(/\/*$/, "/")
  const checks: Check[] = []
  try {
    const bot = await slackCall(root, "auth.test", slack.botToken!)
    if (bot.ok) checks.push(passed("slack bot token", `the token works for ${bot.user ?? "?"} in ${bot.team ?? "?"}`))
    else if (bot.error === "invalid_auth" || bot.error === "not_authed" || bot.error === "token_revoked" || bot.error === "account_inactive") checks.push(failed("slack bot token", `SLACK_BOT_TOKEN was rejected (${bot.error})`, "copy the Bot User OAuth Token (xoxb-…) from the app's OAuth & Permissions page into SLACK_BOT_TOKEN"))
    else checks.push(failed("slack bot token", `auth.test answered ${bot.error}`, "check SLACK_BOT_TOKEN is the bot token (xoxb-…)"))
    if (slack.appToken) {
      const app = await slackCall(root, "apps.connections.open", slack.appToken)
      if (app.ok) checks.push(passed("slack app token", "Socket Mode connections are allowed"))
      else checks.push(failed("slack app token", `SLACK_APP_TOKEN was refused (${app.error})`, "create an app-level token (xapp-…) with connections:write under Basic Information and put it in SLACK_APP_TOKEN"))
    }
  } catch (error) {
    checks.push(failed("slack", `could not reach ${root}: ${reason(error)}`, "check this machine's network (and SLACK_API_URL when set)"))
  }
  return checks
}
