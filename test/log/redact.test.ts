import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { createLogger } from "../../src/log/log.ts"
import { REDACTED, redactor, secretsOf } from "../../src/log/redact.ts"
import { waitFor } from "../support/wait-for.ts"

const TELEGRAM = "123456:AAF secret/with+chars"
const SLACK_BOT = "xoxb-1111-2222-abcdefgh"
const SLACK_APP = "xapp-1-A111-2222-abcdef"
const SIGNING = "8f1e2d3c4b5a69788796a5b4c3d2e1f0"
const OPENAI = "sk-proj-ABCDEFGHIJKLMNOP"
const ANTHROPIC = "sk-ant-api03-QRSTUVWXYZ"
const COMPATIBLE = "local-key-12345"
const HOOKS = "hooks-token-0123456789"
const BRAVE = "BSA-brave-key-987654"
const DB_PASSWORD = "pa ss@word:/?"
const WEBHOOK = "telegram_webhook_secret-1"
const ALL = [TELEGRAM, SLACK_BOT, SLACK_APP, SIGNING, OPENAI, ANTHROPIC, COMPATIBLE, HOOKS, BRAVE, DB_PASSWORD, WEBHOOK]

const secretConfig = {
  telegram: { botToken: TELEGRAM, webhookSecret: WEBHOOK, webhookPort: 0 },
  slack: { botToken: SLACK_BOT, appToken: SLACK_APP, signingSecret: SIGNING, port: 0 },
  providers: { openai: { apiKey: OPENAI }, anthropic: { apiKey: ANTHROPIC }, openaiCompatible: { apiKey: COMPATIBLE } },
  hooks: { token: HOOKS, host: "127.0.0.1", port: 0 },
  search: { provider: "brave" as const, apiKey: BRAVE, apiUrl: "https://example.test" },
  storeUrl: `postgres://steward:${encodeURIComponent(DB_PASSWORD)}@db.internal:5432/steward`,
}

/** Every spelling a secret is looked for in: raw, percent-encoded (both cases), form-encoded, in a JSON string. */
function spellings(secret: string): string[] {
  const encoded = encodeURIComponent(secret)
  return [secret, encoded, encoded.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase()), encodeURI(secret), new URLSearchParams({ s: secret }).toString().slice(2), JSON.stringify(secret).slice(1, -1)]
}

let dir: string
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "steward-redact-"))
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

describe("secrets in logs", () => {
  it("come from every secret the configuration holds, the database password raw and decoded", () => {
    expect(secretsOf(secretConfig)).toEqual(expect.arrayContaining([...ALL, encodeURIComponent(DB_PASSWORD)]))
    expect(secretsOf({ storeUrl: "postgres://u@h/db?password=qwerty12" })).toEqual(["qwerty12"])
    expect(secretsOf({ admin: { host: "127.0.0.1", port: 8791, token: "the-console-token-1234" } })).toEqual(["the-console-token-1234"])
    expect(secretsOf({})).toEqual([])
  })

  it("include ADMIN_TOKEN, a password in SEARXNG_URL, and what MCP_CONFIG gives its servers to authenticate with", () => {
    const mcp = join(dir, "mcp.json")
    writeFileSync(mcp, JSON.stringify({
      mcpServers: {
        files: { command: "x", env: { GITHUB_PERSONAL_ACCESS_TOKEN: "ghp_mcp_env_token", API_KEY: "mcp-env-key-1", DATA_PATH: "/usr/local/share" } },
        remote: { url: "https://bot:mcp-url-pw@mcp.example/mcp", headers: { Authorization: "Bearer mcp-bearer-2", Accept: "application/json" } },
      },
    }))
    const secrets = secretsOf({ admin: { token: "admin-token-0123456789", host: "127.0.0.1" }, search: { provider: "searxng", url: "http://me:searx-pw@searx.local" }, mcp: { configFile: mcp } })
    expect(secrets).toEqual(expect.arrayContaining(["admin-token-0123456789", "searx-pw", Buffer.from("me:searx-pw").toString("base64"), "ghp_mcp_env_token", "mcp-env-key-1", "Bearer mcp-bearer-2", "mcp-bearer-2", "mcp-url-pw", Buffer.from("bot:mcp-url-pw").toString("base64")]))
    // Values that authenticate nothing are not blanked out of every line.
    expect(secrets).not.toContain("/usr/local/share")
    expect(secrets).not.toContain("application/json")
    expect(secretsOf({ mcp: { configFile: join(dir, "missing.json") } })).toEqual([])
  })

  it("are replaced in every spelling, the longest first", () => {
    const redact = redactor([TELEGRAM, "abcd", "abcdefgh"])
    for (const form of spellings(TELEGRAM)) expect(redact(`GET https://api.telegram.org/bot${form}/getMe`)).toBe(`GET https://api.telegram.org/bot${REDACTED}/getMe`)
    expect(redact("x abcdefgh y abcd")).toBe(`x ${REDACTED} y ${REDACTED}`)
    expect(redactor([])("nothing to hide")).toBe("nothing to hide")
  })

  it("never reach the log file at debug level: messages, error causes, nested errors, properties, URLs", async () => {
    const logFile = join(dir, "steward.log")
    const errors: string[] = []
    const log = await createLogger({ ...secretConfig, logLevel: "debug", logFile }, (entry) => errors.push(JSON.stringify(entry)))
    for (const secret of ALL) {
      for (const form of spellings(secret)) {
        const url = `https://host.example/bot${form}/getUpdates?key=${form}`
        const network = Object.assign(new TypeError(`fetch failed: ${url}`), { url, headers: { authorization: `Bearer ${form}` } })
        // As grammY's HttpError: the underlying error in a property, the cause chain below it.
        const wrapped = Object.assign(new Error("Network request for 'getUpdates' failed!", { cause: new Error(`cause ${form}`, { cause: network }) }), { error: network })
        log.error({ err: wrapped, request: { url, body: { token: form } } }, `polling failed at ${url}`)
        log.debug(`debug ${form}`)
        log.child({ token: form }).warn({ nested: [{ deeper: { value: form } }] }, "child")
      }
    }
    log.info("the end")
    const written = await waitFor(() => (existsSync(logFile) && readFileSync(logFile, "utf8").includes("the end") ? readFileSync(logFile, "utf8") : undefined), 10_000)
    expect(written.split("\n").length).toBeGreaterThan(ALL.length * 6 * 3)
    expect(written).toContain(REDACTED)
    const whole = written + errors.join("\n")
    for (const secret of ALL) for (const form of spellings(secret)) expect(whole.includes(form), `${JSON.stringify(form)} of ${JSON.stringify(secret)}`).toBe(false)
  })
})
