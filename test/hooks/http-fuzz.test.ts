/**
 * Every HTTP endpoint Steward serves — POST /hooks/<name>, the Telegram webhook, Slack's events
 * URL — under random paths (bad percent-escapes included), methods, headers and bodies (invalid
 * JSON, JSON that is not an object, binary, oversized). Each request gets a 4xx, or a 2xx when it
 * happens to be valid; none crashes the process or leaves a request hanging; and each endpoint
 * still does its job afterwards.
 */
import { createHmac } from "node:crypto"
import { request } from "node:http"
import { connect } from "node:net"
import { gzipSync } from "node:zlib"
import pino from "pino"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { SlackChannel } from "../../adapters/slack/slack.ts"
import { TelegramChannel } from "../../adapters/telegram/telegram.ts"
import type { InboundMessage } from "../../src/core/types.ts"
import { HooksServer } from "../../src/hooks/hooks.ts"
import { eventCallback, dmEvent, startSlackApi, type SlackApi } from "../fakes/slack-api.ts"
import { startTelegramApi, textUpdate, type TelegramApi } from "../fakes/telegram-api.ts"
import { seededRandom } from "../support/random.ts"

const HOOKS_TOKEN = "hooks-token-0123456789"
const TELEGRAM_SECRET = "webhook-secret_1"
const REQUESTS_PER_ENDPOINT = 120
const log = pino({ level: process.env.STEWARD_TEST_LOG ?? "silent" }, pino.destination(2))

type Reply = { status: number; body: string }

/** One request; resolves with the status once the response is in, whether or not the server read the whole body. */
function send(port: number, method: string, path: string, headers: Record<string, string | undefined>, body?: Buffer): Promise<Reply> {
  return new Promise((resolve, reject) => {
    let answered = false
    const defined = Object.fromEntries(Object.entries(headers).filter(([, value]) => value !== undefined)) as Record<string, string>
    const req = request({ host: "127.0.0.1", port, method, path, headers: defined, agent: false }, (res) => {
      answered = true
      const chunks: Buffer[] = []
      res.on("data", (chunk: Buffer) => chunks.push(chunk))
      res.on("end", () => {
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") })
        req.destroy()
      })
    })
    req.setTimeout(10_000, () => req.destroy(new Error(`${method} ${path}: no answer within 10 s`)))
    // A server that refuses a large body early may close before it has all been written.
    req.on("error", (error) => (answered ? undefined : reject(error)))
    req.end(body)
  })
}

/** Bytes no HTTP client library would send: the status line the server answers with. */
function sendRaw(port: number, raw: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1")
    let answer = ""
    socket.setTimeout(10_000, () => socket.destroy(new Error("no answer within 10 s")))
    socket.on("data", (chunk) => {
      answer += chunk.toString("latin1")
      const status = /^HTTP\/1\.1 (\d{3})/.exec(answer)
      if (status) {
        resolve(Number(status[1]))
        socket.destroy()
      }
    })
    socket.on("error", reject)
    socket.on("close", () => reject(new Error(`closed without an HTTP answer: ${JSON.stringify(answer)}`)))
    socket.end(raw)
  })
}

const pick = <T>(random: () => number, items: readonly T[]): T => items[Math.floor(random() * items.length)]!

const PATHS = [
  "/",
  "//",
  "/hooks/",
  "/hooks/%",
  "/hooks/%zz",
  "/hooks/%E0%A4%A",
  "/hooks/%C0%AF",
  "/hooks/%FF",
  "/hooks/a%2Fb",
  "/hooks/..%2F..%2Fetc",
  "/hooks/ok",
  "/hooks/ok/",
  "/hooks/ok?x=%",
  "/hooks/%00",
  "/slack/events",
  "/slack/events?%",
  "/slack/events/%",
  "/telegram",
  "/telegram%",
  "/%%%",
  `/hooks/${"a".repeat(8000)}`,
  "*",
]
const METHODS = ["GET", "POST", "POST", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"]
const CONTENT_TYPES = ["application/json", "application/x-www-form-urlencoded", "text/plain", "application/octet-stream", "multipart/form-data; boundary=x", "application/json; charset=utf-16"]

function randomBytes(random: () => number, length: number): Buffer {
  return Buffer.from(Array.from({ length }, () => Math.floor(random() * 256)))
}

function randomBody(random: () => number): Buffer | undefined {
  switch (Math.floor(random() * 12)) {
    case 0:
      return undefined
    case 1:
      return Buffer.from("{")
    case 2:
      return Buffer.from(pick(random, ["null", "[]", "42", '"text"', "true", "{}"]))
    case 3:
      return randomBytes(random, 1 + Math.floor(random() * 2000))
    case 4:
      // Larger than any endpoint takes.
      return Buffer.alloc(5 * 1024 * 1024 + Math.floor(random() * 1000), "x")
    case 5:
      return Buffer.from(JSON.stringify({ update_id: pick(random, ["1", 1.5, null, -1, 2 ** 60]), message: { text: "hi" } }))
    case 6:
      return Buffer.from(JSON.stringify({ type: pick(random, [null, 5, "url_verification", "event_callback", "block_actions", "nonsense"]), challenge: "c" }))
    case 7:
      return Buffer.from(`payload=${encodeURIComponent(pick(random, ["{", "null", "[1]", '{"type":"block_actions"}']))}`)
    case 8:
      return Buffer.from("payload=%E0%A4%A&x=%")
    case 9:
      return Buffer.from("\uFEFF{\"a\":1}", "utf16le")
    default:
      return Buffer.from(JSON.stringify({ a: "b".repeat(Math.floor(random() * 500)) }))
  }
}

type Headers = Record<string, string | undefined>
type Target = { name: string; port: () => number; headers: (random: () => number, body: Buffer | undefined) => Headers }

function slackSignature(secret: string, timestamp: string, body: Buffer | undefined): string {
  return `v0=${createHmac("sha256", secret).update(`v0:${timestamp}:`).update(body ?? Buffer.alloc(0)).digest("hex")}`
}

describe("HTTP endpoints under random requests", () => {
  let telegramApi: TelegramApi
  let slackApi: SlackApi
  let hooks: HooksServer
  let hooksPort: number
  let telegram: TelegramChannel
  let slack: SlackChannel
  const raised: string[] = []
  const received: InboundMessage[] = []

  beforeAll(async () => {
    hooks = new HooksServer(HOOKS_TOKEN, async (name) => void raised.push(name), log)
    hooksPort = await hooks.start(0, "127.0.0.1")
    telegramApi = await startTelegramApi()
    telegram = new TelegramChannel(
      { botToken: telegramApi.token, apiRoot: `${telegramApi.apiRoot}/`, webhookUrl: "https://steward.example.com/telegram", webhookSecret: TELEGRAM_SECRET, webhookPort: 0 },
      log,
      { webhookHost: "127.0.0.1" },
    )
    await telegram.start({ onMessage: async (message) => void received.push(message), commands: [] })
    slackApi = await startSlackApi()
    slack = new SlackChannel({ botToken: slackApi.botToken, signingSecret: slackApi.signingSecret, port: 3000, apiUrl: slackApi.apiUrl }, log, { host: "127.0.0.1", port: 0 })
    await slack.start({ onMessage: async (message) => void received.push(message), commands: [] })
  })

  afterAll(async () => {
    await hooks?.stop()
    await telegram?.stop()
    await slack?.stop()
    await telegramApi?.close()
    await slackApi?.close()
  })

  const targets = (): Target[] => [
    {
      name: "hooks",
      port: () => hooksPort,
      headers: (random) => (random() < 0.6 ? { authorization: pick(random, [`Bearer ${HOOKS_TOKEN}`, `bearer   ${HOOKS_TOKEN}`, "Bearer", "Basic eA==", `Bearer ${HOOKS_TOKEN}x`]) } : {}),
    },
    {
      name: "telegram",
      port: () => telegram.webhookPort!,
      headers: (random) => (random() < 0.6 ? { "x-telegram-bot-api-secret-token": pick(random, [TELEGRAM_SECRET, "", "wrong", TELEGRAM_SECRET.repeat(2)]) } : {}),
    },
    {
      name: "slack",
      port: () => slack.httpPort!,
      headers: (random, body) => {
        const now = Math.floor(Date.now() / 1000)
        const timestamp = pick(random, [String(now), String(now - 3600), String(now + 3600), "", "abc", "1e9", String(2 ** 53)])
        const secret = random() < 0.6 ? slackApi.signingSecret : "not-the-secret"
        return random() < 0.8 ? { "x-slack-request-timestamp": timestamp, "x-slack-signature": pick(random, [slackSignature(secret, timestamp, body), "v0=zz", ""]) } : {}
      },
    },
  ]

  it("answers every random request with a 2xx or 4xx and keeps serving", async () => {
    const random = seededRandom(12)
    for (const target of targets()) {
      for (let i = 0; i < REQUESTS_PER_ENDPOINT; i++) {
        const method = pick(random, METHODS)
        const path = pick(random, PATHS)
        const body = method === "GET" || method === "HEAD" ? undefined : randomBody(random)
        const headers = { ...target.headers(random, body) }
        if (random() < 0.8) headers["content-type"] = pick(random, CONTENT_TYPES)
        if (random() < 0.1) headers["content-encoding"] = pick(random, ["gzip", "br", "nonsense"])
        const what = `${target.name} #${i}: ${method} ${path.slice(0, 40)} ${JSON.stringify(headers).slice(0, 200)} body=${body?.subarray(0, 40).toString("latin1")}`
        const reply = await send(target.port(), method, path, headers, body)
        expect(reply.status >= 200 && reply.status < 500, `${what} → ${reply.status} ${reply.body.slice(0, 200)}`).toBe(true)
      }
      // What no client library sends: broken request lines, headers and chunk sizes.
      for (const raw of ["GET /hooks/% HTTP/1.1\r\nHost: x\r\n\r\n", "POST /%% HTTP/1.1\r\nContent-Length: -5\r\n\r\n", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "\u0000\u0001garbage\r\n\r\n", "GET / HTTP/1.1\r\nBad Header\r\n\r\n"]) {
        const status = await sendRaw(target.port(), Buffer.from(raw, "latin1"))
        expect(status >= 400 && status < 500, `${target.name} raw ${JSON.stringify(raw)} → ${status}`).toBe(true)
      }
    }
    await stillServing()
  }, 120_000)

  it("answers POST /hooks/% with a valid token with 400 (it used to end the process)", async () => {
    const reply = await send(hooksPort, "POST", "/hooks/%", { authorization: `Bearer ${HOOKS_TOKEN}` })
    expect(reply.status).toBe(400)
    await stillServing()
  })

  it("answers a hook body that is neither empty nor a JSON object with 400, one over 1 MB with 413, and raises nothing for either", async () => {
    const post = (body: Buffer | undefined, headers: Record<string, string> = {}) => send(hooksPort, "POST", "/hooks/deploy-done", { authorization: `Bearer ${HOOKS_TOKEN}`, ...headers }, body)
    const before = raised.length
    for (const text of ["{", "null", "[]", "42", '"text"', "not json", '{"a":1} trailing']) expect((await post(Buffer.from(text))).status, text).toBe(400)
    expect((await post(Buffer.from([0xff, 0xfe, 0x00, 0x01]))).status).toBe(400)
    expect((await post(Buffer.alloc(2 * 1024 * 1024, " "))).status).toBe(413)
    // A body over the limit without a declared length (chunked) is refused as it arrives.
    expect((await post(Buffer.alloc(1024 * 1024 + 1, " "), { "transfer-encoding": "chunked" })).status).toBe(413)
    // A compressed body is never inflated (a bomb stays small): it is not a JSON object as sent.
    expect((await post(gzipSync('{"a":1}'), { "content-encoding": "gzip" })).status).toBe(400)
    expect((await post(gzipSync(Buffer.alloc(64 * 1024 * 1024, " ")), { "content-encoding": "gzip, gzip", "transfer-encoding": "chunked" })).status).toBe(400)
    expect(raised.length).toBe(before)
    expect((await post(undefined)).status).toBe(202)
    expect((await post(Buffer.from('{"source":"ci","ok":true}'), { "content-type": "application/json" })).status).toBe(202)
    expect((await post(Buffer.alloc(1024 * 1024, " "))).status).toBe(202)
    expect(raised.slice(before)).toEqual(["deploy-done", "deploy-done", "deploy-done"])
  })

  it("answers a Telegram body that is not an update with 400, and an oversized one with 413", async () => {
    const post = (body: Buffer) => send(telegram.webhookPort!, "POST", "/telegram", { "content-type": "application/json", "x-telegram-bot-api-secret-token": TELEGRAM_SECRET }, body)
    expect((await post(Buffer.from("{"))).status).toBe(400)
    expect((await post(Buffer.from("null"))).status).toBe(400)
    expect((await post(Buffer.from('{"update_id":"1"}'))).status).toBe(400)
    expect((await post(Buffer.alloc(2 * 1024 * 1024, " "))).status).toBe(413)
  })

  it("answers a signed Slack body that is JSON but not an object with 400", async () => {
    for (const text of ["null", "[]", "42", '{"type":5}']) {
      const body = Buffer.from(text)
      const timestamp = String(Math.floor(Date.now() / 1000))
      const reply = await send(slack.httpPort!, "POST", "/slack/events", { "content-type": "application/json", "x-slack-request-timestamp": timestamp, "x-slack-signature": slackSignature(slackApi.signingSecret, timestamp, body) }, body)
      expect(reply.status, text).toBe(400)
    }
  })

  /** Each endpoint still does its job. */
  async function stillServing(): Promise<void> {
    raised.length = 0
    expect((await send(hooksPort, "POST", "/hooks/deploy.done", { authorization: `Bearer ${HOOKS_TOKEN}` })).status).toBe(202)
    expect(raised).toEqual(["deploy.done"])

    const update = textUpdate(1001, 1001, "still here")
    const telegramReply = await send(telegram.webhookPort!, "POST", "/telegram", { "content-type": "application/json", "x-telegram-bot-api-secret-token": TELEGRAM_SECRET }, Buffer.from(JSON.stringify(update)))
    expect(telegramReply.status).toBe(200)
    expect(received.some((message) => message.eventId === `telegram:${update.update_id}`)).toBe(true)

    const event = Buffer.from(JSON.stringify(eventCallback(slackApi.team, dmEvent("U0FUZZ", "D0FUZZ", "still here too"))))
    const timestamp = String(Math.floor(Date.now() / 1000))
    const slackReply = await send(slack.httpPort!, "POST", "/slack/events", { "content-type": "application/json", "x-slack-request-timestamp": timestamp, "x-slack-signature": slackSignature(slackApi.signingSecret, timestamp, event) }, event)
    expect(slackReply.status).toBe(200)
    await slackApi.waitFor(() => received.some((message) => message.text === "still here too"))
  }
})
