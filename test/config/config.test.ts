import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, afterEach, describe, expect, it } from "vitest"
import { ConfigError, loadConfig, readEnvFile, storeUrlOf } from "../../src/config/config.ts"
import { serverTimeZone } from "../../src/config/platforms.ts"
import { redactUrl } from "../../src/config/fields.ts"

const BASE = { MODEL: "openai:gpt-4.1-mini", OPENAI_API_KEY: "sk-test" }

function errorOf(env: NodeJS.ProcessEnv): ConfigError {
  try {
    loadConfig(env)
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as ConfigError).message).not.toContain("\n")
    return error as ConfigError
  }
  throw new Error("loadConfig accepted a bad environment")
}

describe("loadConfig", () => {
  it("applies defaults", () => {
    const config = loadConfig(BASE)
    expect(config.dataDir).toBe(resolve("./data"))
    const spec = { provider: "openai", id: "gpt-4.1-mini", variable: "MODEL" }
    expect(config.models).toEqual({ teller: spec, planner: spec, worker: spec })
    expect(config.providers.openai).toEqual({ apiKey: "sk-test", baseURL: undefined })
    expect(config.allowedUsers).toEqual({ anyone: false, users: new Set(["console:local"]) })
    expect(config.logLevel).toBe("info")
    expect(config.logFile).toBeUndefined()
    expect(config.workerConcurrency).toBe(4)
    expect(config.timeouts).toEqual({ planner: 300, worker: 900 })
    expect(config.maxSteps).toEqual({ teller: 8, planner: 20, worker: 30 })
    expect(config.context).toEqual({ contextTokens: 128_000, outputTokens: 32_000 })
    expect(config.contextBudgetTokens).toBe(32_000)
    expect(config.maxRetries).toBe(3)
    expect(config.permissionsFile).toBeUndefined()
    expect(config.slack.port).toBe(3000)
    expect(config.telegram.webhookPort).toBe(8443)
    expect(config.memoryScope).toBe("user")
    expect(config.hooks).toEqual({ token: undefined, host: "127.0.0.1", port: 8790 })
  })

  it("does not share the default allow-list between configs", () => {
    loadConfig(BASE).allowedUsers.users.add("telegram:1")
    expect(loadConfig(BASE).allowedUsers.users).toEqual(new Set(["console:local"]))
  })

  it("parses explicit values", () => {
    const config = loadConfig({
      ...BASE,
      DATA_DIR: "/srv/steward",
      LOG_LEVEL: "debug",
      LOG_FILE: "steward.log",
      WORKER_CONCURRENCY: "64",
      PLANNER_TIMEOUT: "1",
      MODEL_MAX_RETRIES: "0",
      MODEL_TIMEOUT: "30",
      PERMISSIONS_FILE: "perms.json",
      TELEGRAM_BOT_TOKEN: "1:x",
      TELEGRAM_WEBHOOK_URL: "https://bot.example.com/tg",
      TELEGRAM_WEBHOOK_SECRET: "s3cret",
      TELEGRAM_WEBHOOK_PORT: "8443",
      SLACK_PORT: "3100",
      MEMORY_SCOPE: "shared",
      HOOKS_TOKEN: "hook-token-0123456789",
    })
    expect(config.dataDir).toBe("/srv/steward")
    expect(config.logLevel).toBe("debug")
    expect(config.logFile).toBe(resolve("steward.log"))
    expect(config.workerConcurrency).toBe(64)
    expect(config.timeouts.planner).toBe(1)
    expect(config.maxRetries).toBe(0)
    expect(config.modelTimeoutMs).toBe(30_000)
    expect(config.permissionsFile).toBe(resolve("perms.json"))
    expect(config.telegram).toMatchObject({ webhookUrl: "https://bot.example.com/tg", webhookPort: 8443 })
    expect(config.slack.port).toBe(3100)
    expect(config.memoryScope).toBe("shared")
    expect(config.hooks.token).toBe("hook-token-0123456789")
  })

  it("listens for hooks on loopback unless HOOKS_HOST names another address", () => {
    expect(loadConfig(BASE).hooks.host).toBe("127.0.0.1")
    expect(loadConfig({ ...BASE, HOOKS_HOST: "0.0.0.0" }).hooks.host).toBe("0.0.0.0")
    expect(loadConfig({ ...BASE, HOOKS_HOST: "::" }).hooks.host).toBe("::")
    expect(loadConfig({ ...BASE, HOOKS_HOST: "hooks.internal" }).hooks.host).toBe("hooks.internal")
    expect(errorOf({ ...BASE, HOOKS_HOST: "not a host" }).message).toMatch(/^HOOKS_HOST: expected an address to listen on/)
  })

  it("takes DEFAULT_TIMEZONE as an IANA zone, defaulting to the server's, and refuses anything else", () => {
    expect(loadConfig(BASE).defaultTimeZone).toBe(Intl.DateTimeFormat().resolvedOptions().timeZone)
    expect(loadConfig({ ...BASE, DEFAULT_TIMEZONE: "Australia/Lord_Howe" }).defaultTimeZone).toBe("Australia/Lord_Howe")
    expect(errorOf({ ...BASE, DEFAULT_TIMEZONE: "Berlin" }).message).toMatch(/^DEFAULT_TIMEZONE: expected an IANA time zone, e.g. "Europe\/Berlin"/)
  })

  it("requires the secrets that guard the chat endpoints", () => {
    const telegram = errorOf({ ...BASE, TELEGRAM_BOT_TOKEN: "1:x", TELEGRAM_WEBHOOK_URL: "https://bot.example.com/tg" })
    expect(telegram.variable).toBe("TELEGRAM_WEBHOOK_SECRET")
    expect(errorOf({ ...BASE, TELEGRAM_BOT_TOKEN: "1:x", TELEGRAM_WEBHOOK_URL: "https://bot.example.com/tg", TELEGRAM_WEBHOOK_SECRET: "has space" }).variable).toBe("TELEGRAM_WEBHOOK_SECRET")
    expect(errorOf({ ...BASE, SLACK_BOT_TOKEN: "xoxb-1" }).variable).toBe("SLACK_SIGNING_SECRET")
    expect(loadConfig({ ...BASE, SLACK_BOT_TOKEN: "xoxb-1", SLACK_APP_TOKEN: "xapp-1" }).slack.appToken).toBe("xapp-1")
    expect(errorOf({ ...BASE, HOOKS_TOKEN: "short" }).variable).toBe("HOOKS_TOKEN")
    expect(errorOf({ ...BASE, ADMIN_TOKEN: "short" }).variable).toBe("ADMIN_TOKEN")
    expect(loadConfig({ ...BASE, ADMIN_TOKEN: "console-token-0123" }).admin.token).toBe("console-token-0123")
    expect(loadConfig({ ...BASE, ADMIN_TOKEN: "" }).admin.token).toBeUndefined()
  })

  it.each([
    [{ SLACK_APP_TOKEN: "xapp-1-A" }, "SLACK_BOT_TOKEN", "because SLACK_APP_TOKEN is set"],
    [{ SLACK_SIGNING_SECRET: "abc" }, "SLACK_BOT_TOKEN", "because SLACK_SIGNING_SECRET is set"],
    [{ TELEGRAM_WEBHOOK_SECRET: "s3cret" }, "TELEGRAM_BOT_TOKEN", "because TELEGRAM_WEBHOOK_SECRET is set"],
    [{ TELEGRAM_WEBHOOK_URL: "https://bot.example.com/tg", TELEGRAM_WEBHOOK_SECRET: "s3cret" }, "TELEGRAM_BOT_TOKEN", "because TELEGRAM_WEBHOOK_URL is set"],
    [{ TELEGRAM_BOT_TOKEN: "1:x", TELEGRAM_WEBHOOK_SECRET: "s3cret" }, "TELEGRAM_WEBHOOK_URL", "because TELEGRAM_WEBHOOK_SECRET is set"],
  ])("refuses a half-set chat platform %o, naming %s", (env, variable, because) => {
    const error = errorOf({ ...BASE, ...env })
    expect(error.variable).toBe(variable)
    expect(error.message).toMatch(new RegExp(`^${variable} is not set: expected .*${because}$`))
  })

  it.each([
    ["TELEGRAM_BOT_TOKEN", "hello", 'TELEGRAM_BOT_TOKEN: expected <bot id>:<secret> as @BotFather gives it, e.g. 123456789:AAE…, got "hello" (5 characters)'],
    ["TELEGRAM_BOT_TOKEN", "123456:AA bad", 'TELEGRAM_BOT_TOKEN: expected <bot id>:<secret> as @BotFather gives it, e.g. 123456789:AAE…, got "123456…" (13 characters)'],
    ["TELEGRAM_BOT_TOKEN", "bot123:AAx", 'TELEGRAM_BOT_TOKEN: expected <bot id>:<secret> as @BotFather gives it, e.g. 123456789:AAE…, got "bot123…" (10 characters)'],
    ["SLACK_BOT_TOKEN", "xoxp-123-456", 'SLACK_BOT_TOKEN: expected the Bot User OAuth Token, which starts with xoxb- (OAuth & Permissions), got "xoxp-1…" (12 characters)'],
    ["SLACK_APP_TOKEN", "xoxb-123", 'SLACK_APP_TOKEN: expected an app-level token, which starts with xapp- (Basic Information → App-Level Tokens), got "xoxb-1…" (8 characters)'],
  ])("checks the form of %s before any request (%s), showing only its start", (variable, value, message) => {
    const env = { ...BASE, SLACK_BOT_TOKEN: "xoxb-1", SLACK_SIGNING_SECRET: "s", [variable]: value }
    expect(errorOf(env).message).toBe(message)
  })

  it("accepts any token of the documented forms", () => {
    expect(loadConfig({ ...BASE, TELEGRAM_BOT_TOKEN: "7:a_B-9" }).telegram.botToken).toBe("7:a_B-9")
    expect(loadConfig({ ...BASE, SLACK_BOT_TOKEN: "xoxb-1-2-abc", SLACK_APP_TOKEN: "xapp-1-A-2" }).slack.botToken).toBe("xoxb-1-2-abc")
  })

  it("refuses a TZ the system cannot read, and takes a readable one as the default zone", () => {
    expect(errorOf({ ...BASE, TZ: "Mars/Olympus" }).message).toBe('TZ: expected an IANA time zone, e.g. Europe/Berlin (or unset TZ and set DEFAULT_TIMEZONE), got "Mars/Olympus"')
    expect(errorOf({ ...BASE, TZ: "Mars/Olympus", DEFAULT_TIMEZONE: "Europe/Berlin" }).variable).toBe("TZ")
    expect(loadConfig({ ...BASE, TZ: "Asia/Tokyo" }).defaultTimeZone).toBe("Asia/Tokyo")
    expect(loadConfig({ ...BASE, TZ: ":Asia/Tokyo" }).defaultTimeZone).toBe("Asia/Tokyo")
    expect(loadConfig({ ...BASE, TZ: "Asia/Tokyo", DEFAULT_TIMEZONE: "Europe/Berlin" }).defaultTimeZone).toBe("Europe/Berlin")
  })

  it.each([
    ["UTC0", "UTC"],
    ["UTC+0", "UTC"],
    ["<+03>-3", "Etc/GMT-3"],
    ["EST5", "Etc/GMT+5"],
    ["EST5EDT", "EST5EDT"],
    ["Etc/GMT+3", "Etc/GMT+3"],
    ["UTC", "UTC"],
    ["GMT", "GMT"],
  ])("reads TZ=%s, a fixed-offset POSIX rule included, as the zone %s", (tz, zone) => {
    expect(loadConfig({ ...BASE, TZ: tz }).defaultTimeZone).toBe(zone)
  })

  it("refuses a POSIX rule with daylight saving or a part-hour offset, asking for the place", () => {
    expect(errorOf({ ...BASE, TZ: "CET-1CEST,M3.5.0,M10.5.0/3" }).message).toBe('TZ: expected an IANA time zone, e.g. Europe/Berlin (or unset TZ and set DEFAULT_TIMEZONE); a POSIX rule with daylight saving is not read: name the place instead, got "CET-1CEST,M3.5.0,M10.5.0/3"')
    expect(errorOf({ ...BASE, TZ: "<+0530>-5:30" }).variable).toBe("TZ")
  })

  it("takes UTC when TZ is unset or empty and the system's zone has no name (Etc/Unknown)", () => {
    expect(serverTimeZone(undefined, "Etc/Unknown")).toEqual({ zone: "UTC" })
    expect(serverTimeZone(undefined, undefined)).toEqual({ zone: "UTC" })
    expect(serverTimeZone(undefined, "Asia/Tokyo")).toEqual({ zone: "Asia/Tokyo" })
  })

  it.each([
    ["http://bot.example.com/tg", "TELEGRAM_WEBHOOK_URL: expected the public https URL Telegram posts updates to"],
    ["https://bot.example.com:3000/tg", "TELEGRAM_WEBHOOK_URL: expected a URL on port 443, 80, 88 or 8443, the ports Telegram posts webhooks to"],
  ])("refuses a webhook URL Telegram would refuse (%s) before any request", (url, message) => {
    expect(errorOf({ ...BASE, TELEGRAM_BOT_TOKEN: "1:x", TELEGRAM_WEBHOOK_URL: url, TELEGRAM_WEBHOOK_SECRET: "s3cret" }).message).toMatch(new RegExp(`^${message.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`))
    expect(loadConfig({ ...BASE, TELEGRAM_BOT_TOKEN: "1:x", TELEGRAM_WEBHOOK_URL: "https://bot.example.com:8443/tg", TELEGRAM_WEBHOOK_SECRET: "s3cret" }).telegram.webhookUrl).toBe("https://bot.example.com:8443/tg")
  })

  it("treats empty strings as unset", () => {
    const config = loadConfig({ ...BASE, DATA_DIR: "", WORKER_CONCURRENCY: "", LOG_LEVEL: "", OPENAI_BASE_URL: "", TELLER_MODEL: "" })
    expect(config.dataDir).toBe(resolve("./data"))
    expect(config.workerConcurrency).toBe(4)
    expect(config.logLevel).toBe("info")
    expect(config.providers.openai.baseURL).toBeUndefined()
    expect(config.models.teller.variable).toBe("MODEL")
    expect(errorOf({ ...BASE, OPENAI_API_KEY: "" }).variable).toBe("OPENAI_API_KEY")
  })

  it.each([
    ["WORKER_CONCURRENCY", "abc", 'WORKER_CONCURRENCY: expected a whole number from 1 to 64, got "abc"'],
    ["WORKER_CONCURRENCY", "65", 'WORKER_CONCURRENCY: expected a whole number from 1 to 64, got "65"'],
    ["WORKER_CONCURRENCY", "0", 'WORKER_CONCURRENCY: expected a whole number from 1 to 64, got "0"'],
    ["WORKER_CONCURRENCY", "4.5", 'WORKER_CONCURRENCY: expected a whole number from 1 to 64, got "4.5"'],
    ["WORKER_CONCURRENCY", " ", 'WORKER_CONCURRENCY: expected a whole number from 1 to 64, got " "'],
    ["PLANNER_TIMEOUT", "1e3", 'PLANNER_TIMEOUT: expected a whole number of at least 1, got "1e3"'],
    ["WORKER_TIMEOUT", "-5", 'WORKER_TIMEOUT: expected a whole number of at least 1, got "-5"'],
    ["PLANNER_MAX_STEPS", "201", 'PLANNER_MAX_STEPS: expected a whole number from 1 to 200, got "201"'],
    ["MODEL_CONTEXT_TOKENS", "999", 'MODEL_CONTEXT_TOKENS: expected a whole number of at least 1000, got "999"'],
    ["MODEL_OUTPUT_TOKENS", "99999999999999999999", 'MODEL_OUTPUT_TOKENS: expected a whole number of at least 256, got "99999999999999999999"'],
    ["CONTEXT_BUDGET_TOKENS", "3999", 'CONTEXT_BUDGET_TOKENS: expected a whole number of at least 4000, got "3999"'],
    ["CONTEXT_BUDGET_TOKENS", "32k", 'CONTEXT_BUDGET_TOKENS: expected a whole number of at least 4000, got "32k"'],
    ["MODEL_MAX_RETRIES", "11", 'MODEL_MAX_RETRIES: expected a whole number from 0 to 10, got "11"'],
    ["MODEL_TIMEOUT", "0", 'MODEL_TIMEOUT: expected a whole number from 1 to 300, got "0"'],
    ["MODEL_TIMEOUT", "301", 'MODEL_TIMEOUT: expected a whole number from 1 to 300, got "301"'],
    ["SLACK_PORT", "70000", 'SLACK_PORT: expected a whole number from 1 to 65535, got "70000"'],
    ["OPENAI_BASE_URL", "localhost:8080", 'OPENAI_BASE_URL: expected an http(s) URL, got "localhost:8080"'],
    ["TELEGRAM_API_ROOT", "ftp://example.com", 'TELEGRAM_API_ROOT: expected an http(s) URL, got "ftp://example.com"'],
    ["LOG_LEVEL", "verbose", 'LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent, got "verbose"'],
    ["MEMORY_SCOPE", "team", 'MEMORY_SCOPE: expected user or shared, got "team"'],
    [
      "MODEL",
      "gpt-4o",
      'MODEL: expected <provider>:<model-id>, e.g. openai:gpt-4.1-mini (providers: openai, anthropic, openai-compatible), got "gpt-4o"',
    ],
    [
      "PLANNER_MODEL",
      "groq:llama3",
      'PLANNER_MODEL: expected <provider>:<model-id>, e.g. openai:gpt-4.1-mini (providers: openai, anthropic, openai-compatible), got "groq:llama3"',
    ],
    [
      "ALLOWED_USERS",
      "telegram:1001, Bob",
      'ALLOWED_USERS: expected a comma-separated list of <channel>:<user-id>, e.g. telegram:1001,slack:U1001,console:local, or * for anyone, got entry "Bob"',
    ],
    [
      "ALLOWED_USERS",
      " , ",
      'ALLOWED_USERS: expected a comma-separated list of <channel>:<user-id>, e.g. telegram:1001,slack:U1001,console:local, or * for anyone, got " , "',
    ],
    ["ALLOWED_USERS", "telegram:1001,telegram:@bob", 'ALLOWED_USERS: a Telegram user id is a number, e.g. telegram:1001, got entry "telegram:@bob"'],
    ["ALLOWED_USERS", "slack:D0123", 'ALLOWED_USERS: a Slack user id starts with U or W, e.g. slack:U1001, got entry "slack:D0123"'],
    ["ALLOWED_USERS", "matrix:@bob:example.org", 'ALLOWED_USERS: the channel must be one of telegram, slack, console, got entry "matrix:@bob:example.org"'],
    ["ALLOWED_USERS", "console:me", 'ALLOWED_USERS: the console\'s one user is console:local, got entry "console:me"'],
    ["ADMIN_PORT", "on", 'ADMIN_PORT: expected a port from 0 to 65535, or "off", got "on"'],
    ["SHUTDOWN_GRACE", "10s", 'SHUTDOWN_GRACE: expected a whole number from 0 to 3600, got "10s"'],
  ])("rejects %s=%j in one line", (variable, value, message) => {
    const error = errorOf({ ...BASE, [variable]: value })
    expect(error.variable).toBe(variable)
    expect(error.message).toBe(message)
  })

  it("keeps a value with a newline on one line", () => {
    expect(errorOf({ ...BASE, LOG_LEVEL: "info\ndebug" }).message).toBe(
      'LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent, got "info\\ndebug"',
    )
  })

  it("requires MODEL unless every role has its own", () => {
    expect(errorOf({ OPENAI_API_KEY: "k" }).message).toBe(
      "MODEL is not set: expected <provider>:<model-id>, e.g. openai:gpt-4.1-mini (providers: openai, anthropic, openai-compatible)",
    )
    expect(errorOf({ OPENAI_API_KEY: "k", TELLER_MODEL: "openai:a", PLANNER_MODEL: "openai:b" }).variable).toBe("MODEL")
    const config = loadConfig({ OPENAI_API_KEY: "k", TELLER_MODEL: "openai:a", PLANNER_MODEL: "openai:b", WORKER_MODEL: "openai:c" })
    expect(Object.values(config.models).map((m) => m.id)).toEqual(["a", "b", "c"])
  })

  it("lets each role override MODEL", () => {
    const config = loadConfig({
      ...BASE,
      ANTHROPIC_API_KEY: "ak",
      ANTHROPIC_BASE_URL: "https://anthropic.example.com/v1",
      PLANNER_MODEL: "anthropic:claude-sonnet-4-5",
    })
    expect(config.models.teller).toEqual({ provider: "openai", id: "gpt-4.1-mini", variable: "MODEL" })
    expect(config.models.planner).toEqual({ provider: "anthropic", id: "claude-sonnet-4-5", variable: "PLANNER_MODEL" })
    expect(config.models.worker.variable).toBe("MODEL")
    expect(config.providers.anthropic).toEqual({ apiKey: "ak", baseURL: "https://anthropic.example.com/v1" })
  })

  it("splits the provider off at the first colon only", () => {
    const config = loadConfig({
      MODEL: "openai-compatible:qwen2.5:7b",
      OPENAI_COMPATIBLE_BASE_URL: "http://localhost:11434/v1",
    })
    expect(config.models.worker).toEqual({ provider: "openai-compatible", id: "qwen2.5:7b", variable: "MODEL" })
    expect(config.providers.openaiCompatible).toEqual({ baseURL: "http://localhost:11434/v1", apiKey: undefined })
    expect(errorOf({ MODEL: "openai:" }).variable).toBe("MODEL")
  })

  it("requires the key or URL of every provider a role uses, naming the role's variable", () => {
    expect(errorOf({ MODEL: "openai:gpt-4.1-mini" }).message).toBe(
      "OPENAI_API_KEY is not set: expected an OpenAI API key, because MODEL uses openai",
    )
    expect(errorOf({ ...BASE, WORKER_MODEL: "anthropic:claude-haiku-4-5" }).message).toBe(
      "ANTHROPIC_API_KEY is not set: expected an Anthropic API key, because WORKER_MODEL uses anthropic",
    )
    expect(errorOf({ ...BASE, TELLER_MODEL: "openai-compatible:llama3" }).message).toBe(
      "OPENAI_COMPATIBLE_BASE_URL is not set: expected the server's http(s) URL, e.g. http://localhost:11434/v1, because TELLER_MODEL uses openai-compatible",
    )
    // A provider no role uses needs nothing.
    expect(() => loadConfig({ MODEL: "anthropic:claude-sonnet-4-5", ANTHROPIC_API_KEY: "ak" })).not.toThrow()
  })

  it("keeps the state in SQLite unless STORE_URL names a Postgres database; refuses any other URL without showing its password", () => {
    expect(loadConfig(BASE).storeUrl).toBeUndefined()
    expect(loadConfig({ ...BASE, STORE_URL: "" }).storeUrl).toBeUndefined()
    expect(loadConfig({ ...BASE, STORE_URL: "postgres://u:p@127.0.0.1:5432/steward" }).storeUrl).toBe("postgres://u:p@127.0.0.1:5432/steward")
    expect(loadConfig({ ...BASE, STORE_URL: "postgresql://u@db/steward" }).storeUrl).toBe("postgresql://u@db/steward")
    const expected = "expected postgres://user:password@host:port/database (or empty for SQLite in DATA_DIR)"
    expect(errorOf({ ...BASE, STORE_URL: "mysql://root:hunter2@db/steward" }).message).toBe(`STORE_URL: ${expected}, got "mysql://root:***@db/steward"`)
    expect(errorOf({ ...BASE, STORE_URL: "root:hunter2@db" }).message).toBe(`STORE_URL: ${expected}, got "root:***@db"`)
    expect(storeUrlOf({ STORE_URL: "postgres://u:p@h/d" })).toBe("postgres://u:p@h/d")
    expect(storeUrlOf({})).toBeUndefined()
    expect(() => storeUrlOf({ STORE_URL: "sqlite://x:secret@y" })).toThrow(`STORE_URL: ${expected}, got "sqlite://x:***@y"`)
    expect(redactUrl("postgres://u:p@ss@h:5432/d?sslmode=require&password=x")).toBe("postgres://u:***@h:5432/d?sslmode=require&password=***")
  })

  it("reads the admin server's address and the shutdown grace", () => {
    expect([loadConfig(BASE).admin, loadConfig(BASE).shutdownGraceMs]).toEqual([{ host: "127.0.0.1", port: 8791 }, 10_000])
    expect(loadConfig({ ...BASE, ADMIN_PORT: "off" }).admin.port).toBeUndefined()
    expect(loadConfig({ ...BASE, ADMIN_PORT: "0", ADMIN_HOST: "0.0.0.0", SHUTDOWN_GRACE: "0" })).toMatchObject({ admin: { host: "0.0.0.0", port: 0 }, shutdownGraceMs: 0 })
  })

  it("parses ALLOWED_USERS", () => {
    const list = loadConfig({ ...BASE, ALLOWED_USERS: " telegram:1001 ,slack:U1001,console:local," }).allowedUsers
    expect(list).toEqual({ anyone: false, users: new Set(["telegram:1001", "slack:U1001", "console:local"]) })
    expect(loadConfig({ ...BASE, ALLOWED_USERS: "*" }).allowedUsers).toEqual({ anyone: true, users: new Set() })
  })
})

describe("readEnvFile", () => {
  const dir = mkdtempSync(join(tmpdir(), "steward-env-"))
  afterEach(() => {
    delete process.env.STEWARD_TEST_FROM_FILE
    delete process.env.STEWARD_TEST_FROM_ENV
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it("loads the file without overriding the environment", () => {
    const file = join(dir, ".env")
    writeFileSync(file, "STEWARD_TEST_FROM_FILE=file\nSTEWARD_TEST_FROM_ENV=file\n")
    process.env.STEWARD_TEST_FROM_ENV = "env"
    readEnvFile(file)
    expect(process.env.STEWARD_TEST_FROM_FILE).toBe("file")
    expect(process.env.STEWARD_TEST_FROM_ENV).toBe("env")
  })

  it("ignores a missing file", () => {
    expect(() => readEnvFile(join(dir, "missing.env"))).not.toThrow()
  })

  it("reports a file it cannot read as a configuration error naming it", () => {
    const error = (() => {
      try {
        readEnvFile(dir) // a folder, not a file
      } catch (thrown) {
        return thrown
      }
    })()
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as Error).message).toMatch(new RegExp(`^${dir}: could not be read: `))
  })

})

describe("configOrExit", () => {
  it("prints one line and exits 2 on a bad environment", () => {
    const configModule = fileURLToPath(new URL("../../src/config/config.ts", import.meta.url))
    const script = `import { configOrExit } from ${JSON.stringify(configModule)}; configOrExit(process.env); console.log("not reached")`
    const result = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      cwd: fileURLToPath(new URL("../..", import.meta.url)),
      env: { PATH: process.env.PATH, ...BASE, WORKER_CONCURRENCY: "abc" },
      encoding: "utf8",
    })
    expect(result.status).toBe(2)
    expect(result.stdout).toBe("")
    expect(result.stderr).toBe('steward: WORKER_CONCURRENCY: expected a whole number from 1 to 64, got "abc"\n')
    expect(result.stderr).not.toMatch(/^\s*at /m)
  })
})
