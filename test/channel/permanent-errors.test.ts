import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { webApi } from "@slack/bolt"
import { GrammyError, HttpError } from "grammy"
import pino from "pino"
import { describe, expect, it } from "vitest"
import { ConsoleChannel } from "../../adapters/console/console.ts"
import { SlackChannel } from "../../adapters/slack/slack.ts"
import { TelegramChannel } from "../../adapters/telegram/telegram.ts"
import { UndeliverableMessage } from "../../src/channel/channel.ts"
import type { OutgoingMessage } from "../../src/core/types.ts"
import { startSlackApi } from "../fakes/slack-api.ts"
import { startTelegramApi } from "../fakes/telegram-api.ts"

const log = pino({ level: process.env.STEWARD_TEST_LOG ?? "silent" })

describe("adapters' permanent-error classification", () => {
  /** Errors as the libraries build them from a platform's answer (grammY's client, @slack/web-api's WebClient). */
  const telegramError = (error_code: number, description: string, parameters = {}) =>
    new GrammyError("Call to 'sendMessage' failed!", { ok: false, error_code, description, parameters }, "sendMessage", { chat_id: 1001, text: "hi" })
  const slackPlatformError = (error: string) => new webApi.WebAPIPlatformError({ ok: false, error, response_metadata: {} })
  const telegramConfig = { botToken: "123:TEST", webhookPort: 0 }
  const slackConfig = { botToken: "xoxb-test", port: 0, apiUrl: "http://127.0.0.1:9/api/" }

  it("Telegram: 400 and 403 are permanent; 429, 5xx, 401, network errors and anything else are not", () => {
    const telegram = new TelegramChannel(telegramConfig, log)
    expect(telegram.isPermanent(telegramError(400, "Bad Request: chat not found"))).toBe(true)
    expect(telegram.isPermanent(telegramError(400, "Bad Request: message is too long"))).toBe(true)
    expect(telegram.isPermanent(telegramError(403, "Forbidden: bot was blocked by the user"))).toBe(true)
    expect(telegram.isPermanent(telegramError(429, "Too Many Requests: retry after 60", { retry_after: 60 }))).toBe(false)
    expect(telegram.isPermanent(telegramError(500, "Internal Server Error"))).toBe(false)
    expect(telegram.isPermanent(telegramError(502, "Bad Gateway"))).toBe(false)
    expect(telegram.isPermanent(telegramError(401, "Unauthorized"))).toBe(false)
    expect(telegram.isPermanent(new HttpError("Network request for 'sendMessage' failed!", new Error("connect ECONNREFUSED")))).toBe(false)
    expect(telegram.isPermanent(new Error("socket hang up"))).toBe(false)
    expect(telegram.isPermanent("a string")).toBe(false)
  })

  it("Telegram: classifies what the real client throws at the adapter's send", async () => {
    const api = await startTelegramApi()
    try {
      const telegram = new TelegramChannel({ botToken: api.token, apiRoot: api.apiRoot, webhookPort: 0 }, log, { maxRetryDelaySeconds: 1 })
      const thrown = (message: OutgoingMessage) => telegram.send("telegram:1001", message).then(() => expect.fail("the send was accepted"), (error: unknown) => error)
      api.failNext("sendMessage", { status: 403, description: "Forbidden: bot was blocked by the user" })
      expect(telegram.isPermanent(await thrown({ text: "blocked" }))).toBe(true)
      api.failNext("sendMessage", { status: 429, retry_after: 60 })
      expect(telegram.isPermanent(await thrown({ text: "rate limited" }))).toBe(false)
      const empty = await thrown({ text: "" })
      expect(empty).toBeInstanceOf(UndeliverableMessage)
    } finally {
      await api.close()
    }
    const closed = await unusedPort()
    const offline = new TelegramChannel({ botToken: "123:TEST", apiRoot: `http://127.0.0.1:${closed}`, webhookPort: 0 }, log)
    const networkError = await offline.send("telegram:1001", { text: "hi" }).catch((error: unknown) => error)
    expect(networkError).toBeInstanceOf(HttpError)
    expect(offline.isPermanent(networkError)).toBe(false)
  })

  it("Slack: platform errors are permanent except the transient ones; HTTP, request and rate-limit errors are not", () => {
    const slack = new SlackChannel(slackConfig, log)
    for (const code of ["channel_not_found", "not_in_channel", "is_archived", "invalid_blocks", "msg_too_long"]) {
      expect(slack.isPermanent(slackPlatformError(code)), code).toBe(true)
    }
    // A bad token or a missing scope is the deployment's to fix: replies wait for it.
    for (const code of ["ratelimited", "internal_error", "fatal_error", "service_unavailable", "request_timeout", "team_added_to_org", "invalid_auth", "not_authed", "account_inactive", "token_revoked", "missing_scope"]) {
      expect(slack.isPermanent(slackPlatformError(code)), code).toBe(false)
    }
    expect(slack.isPermanent(new webApi.WebAPIHTTPError(503, "Service Unavailable", {}, ""))).toBe(false)
    expect(slack.isPermanent(new webApi.WebAPIRequestError(Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" })))).toBe(false)
    expect(slack.isPermanent(new webApi.WebAPIRateLimitedError(30))).toBe(false)
    expect(slack.isPermanent(new Error("channel_not_found"))).toBe(false)
    expect(slack.isPermanent(undefined)).toBe(false)
  })

  it("Slack: classifies what the real WebClient throws at the adapter's send", async () => {
    const api = await startSlackApi()
    try {
      const slack = new SlackChannel({ botToken: api.botToken, port: 0, apiUrl: api.apiUrl }, log, { retryConfig: { retries: 0 } })
      const thrown = (text: string) => slack.send(`slack:${api.team}:D0ALICE`, { text }).then(() => expect.fail("the send was accepted"), (error: unknown) => error)
      api.failNext("chat.postMessage", { error: "not_in_channel" })
      expect(slack.isPermanent(await thrown("not a member"))).toBe(true)
      api.failNext("chat.postMessage", { error: "service_unavailable" })
      expect(slack.isPermanent(await thrown("slack is down"))).toBe(false)
      api.failNext("chat.postMessage", { status: 500 })
      const httpError = await thrown("server error")
      expect(httpError).toMatchObject({ code: webApi.ErrorCode.HTTPError })
      expect(slack.isPermanent(httpError)).toBe(false)
      expect(await thrown("")).toBeInstanceOf(UndeliverableMessage)
    } finally {
      await api.close()
    }
  })

  it("Console: nothing is permanent", () => {
    const terminal = new ConsoleChannel()
    expect(terminal.isPermanent(new Error("EPIPE"))).toBe(false)
    expect(terminal.isPermanent(telegramError(400, "Bad Request: chat not found"))).toBe(false)
  })
})

/** A port nothing listens on (bound, then released). */
async function unusedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}
