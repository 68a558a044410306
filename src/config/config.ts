import { resolve } from "node:path"
import { z } from "zod"
import { isTimeZone } from "../schedule/cron.ts"
import { allowHostsSchema } from "../web/address-policy.ts"
import { QUOTA_VARIABLES, quotasOf } from "./quotas.ts"
import { allowedUsers, httpUrl, modelSpec, MODEL_EXPECTED, port, PROVIDERS, slackAppToken, slackBotToken, storeUrl, telegramToken, wholeNumber, type AllowedUsers, type Provider } from "./fields.ts"
import { halfSetPlatform, serverTimeZone } from "./platforms.ts"
import { ConfigError, LOG_LEVELS, SEARCH_PROVIDERS, type Config, type ModelSpec, type SearchConfig } from "./settings.ts"

export { PROVIDERS, type AllowedUsers, type Provider } from "./fields.ts"
export { ConfigError, LOG_LEVELS, SEARCH_PROVIDERS, type Config, type LogLevel, type ModelSpec, type SearchConfig } from "./settings.ts"

const schema = z.object({
  DATA_DIR: z.string().default("./data"),
  STORE_URL: storeUrl.optional(),
  MODEL: modelSpec.optional(),
  TELLER_MODEL: modelSpec.optional(),
  PLANNER_MODEL: modelSpec.optional(),
  WORKER_MODEL: modelSpec.optional(),
  EMBEDDING_MODEL: modelSpec.optional(),
  OPENAI_API_KEY: z.string().optional(),
  OPENAI_BASE_URL: httpUrl().optional(),
  ANTHROPIC_API_KEY: z.string().optional(),
  ANTHROPIC_BASE_URL: httpUrl().optional(),
  OPENAI_COMPATIBLE_BASE_URL: httpUrl().optional(),
  OPENAI_COMPATIBLE_API_KEY: z.string().optional(),
  ALLOWED_USERS: allowedUsers.default(() => ({ anyone: false, users: new Set(["console:local"]) })),
  LOG_LEVEL: z.enum(LOG_LEVELS, `expected one of ${LOG_LEVELS.join(", ")}`).default("info"),
  LOG_FILE: z.string().optional(),
  WORKER_CONCURRENCY: wholeNumber(1, 64).default(4),
  PLANNER_TIMEOUT: wholeNumber(1).default(300),
  WORKER_TIMEOUT: wholeNumber(1).default(900),
  TELLER_MAX_STEPS: wholeNumber(1, 200).default(8),
  PLANNER_MAX_STEPS: wholeNumber(1, 200).default(20),
  WORKER_MAX_STEPS: wholeNumber(1, 200).default(30),
  MAX_REPLY_MESSAGES: wholeNumber(1, 100).default(5),
  MODEL_CONTEXT_TOKENS: wholeNumber(1000).default(128_000),
  MODEL_OUTPUT_TOKENS: wholeNumber(256).default(32_000),
  CONTEXT_BUDGET_TOKENS: wholeNumber(4000).default(32_000),
  MODEL_MAX_RETRIES: wholeNumber(0, 10).default(3),
  // Node's fetch gives up on its own after 300 s without headers or body data.
  MODEL_TIMEOUT: wholeNumber(1, 300).default(300),
  PERMISSIONS_FILE: z.string().optional(),
  TELEGRAM_BOT_TOKEN: telegramToken.optional(),
  TELEGRAM_API_ROOT: httpUrl().optional(),
  // Telegram's own rule for webhooks: https, on one of four ports; it refuses any other at setWebhook.
  TELEGRAM_WEBHOOK_URL: z
    .url({ protocol: /^https$/, error: "expected the public https URL Telegram posts updates to" })
    .refine((url) => ["", "443", "80", "88", "8443"].includes(new URL(url).port), "expected a URL on port 443, 80, 88 or 8443, the ports Telegram posts webhooks to")
    .optional(),
  // Telegram's rule for secret_token.
  TELEGRAM_WEBHOOK_SECRET: z.string().regex(/^[A-Za-z0-9_-]{1,256}$/, "expected 1-256 characters A-Z, a-z, 0-9, _ or -").optional(),
  TELEGRAM_WEBHOOK_PORT: port().default(8443),
  SLACK_BOT_TOKEN: slackBotToken.optional(),
  SLACK_APP_TOKEN: slackAppToken.optional(),
  SLACK_SIGNING_SECRET: z.string().optional(),
  SLACK_PORT: port().default(3000),
  SLACK_API_URL: httpUrl().optional(),
  SLACK_SUGGESTED_PROMPTS: z
    .string()
    .transform((value) => value.split(";").map((prompt) => prompt.trim()).filter(Boolean))
    .pipe(z.array(z.string().max(150, "expected prompts of at most 150 characters")).min(1, "expected 1 to 4 prompts separated by ;").max(4, "expected 1 to 4 prompts separated by ;"))
    .optional(),
  MEMORY_SCOPE: z.enum(["user", "shared"], "expected user or shared").default("user"),
  // Unset: the server's zone (TZ), checked in loadConfig.
  DEFAULT_TIMEZONE: z.string().refine(isTimeZone, 'expected an IANA time zone, e.g. "Europe/Berlin"').optional(),
  WORKSPACE_MAX_MB: wholeNumber(1, 1024 * 1024).default(500),
  // 5 MiB holds any article; the cap keeps a worker from pulling a video or a data dump into memory.
  FETCH_MAX_BYTES: wholeNumber(1024, 1024 ** 3).default(5 * 1024 * 1024),
  FETCH_ALLOW_HOSTS: allowHostsSchema.default(() => ({ hosts: new Set<string>(), cidrs: [] })),
  HOOKS_TOKEN: z.string().min(16, "expected at least 16 characters (it guards an HTTP endpoint)").optional(),
  HOOKS_PORT: port().default(8790),
  MCP_CONFIG: z.string().optional(),
  MCP_TOOL_TIMEOUT: wholeNumber(1, 3600).default(60),
  MCP_TOOL_MAX_SECONDS: wholeNumber(1, 86_400).default(600),
  MCP_ELICITATION_TIMEOUT: wholeNumber(10, 86_400).default(300),
  SEARCH_PROVIDER: z.enum(SEARCH_PROVIDERS, `expected one of ${SEARCH_PROVIDERS.join(", ")}`).optional(),
  SEARXNG_URL: httpUrl().optional(),
  BRAVE_API_KEY: z.string().optional(),
  BRAVE_API_URL: httpUrl().default("https://api.search.brave.com/res/v1/web/search"),
  TAVILY_API_KEY: z.string().optional(),
  TAVILY_API_URL: httpUrl().default("https://api.tavily.com/search"),
  // Loopback by default: taking hooks from other machines is the operator's explicit choice.
  HOOKS_HOST: z.union([z.hostname(), z.ipv6()], "expected an address to listen on, e.g. 127.0.0.1, 0.0.0.0 or ::").default("127.0.0.1"),
  ADMIN_HOST: z.string().default("127.0.0.1"),
  // 0 lets the system pick a free port (tests); "off" disables the admin server.
  ADMIN_PORT: z
    .union([z.literal("off"), wholeNumber(0, 65535)], { error: 'expected a port from 0 to 65535, or "off"' })
    .default(8791),
  // Signs the owner into the browser console at ADMIN_HOST:ADMIN_PORT; unset, there is no console.
  ADMIN_TOKEN: z.string().min(16, "expected at least 16 characters (it signs the owner into the console)").optional(),
  SHUTDOWN_GRACE: wholeNumber(0, 3600).default(10),
  CLUSTER_LEASE_SECONDS: wholeNumber(1, 3600).default(15),
  // Telegram's own download limit for bots is 20 MB.
  MAX_ATTACHMENT_MB: wholeNumber(1, 2000).default(20),
  VISION: z.enum(["on", "off"], "expected on or off").optional(),
  STREAM_REPLIES: z.enum(["on", "off"], "expected on or off").default("on"),
  TRANSCRIBE_MODEL: modelSpec.optional(),
  ...QUOTA_VARIABLES,
})

type Vars = z.output<typeof schema>

const ROLES = ["teller", "planner", "worker"] as const
/** Providers whose API has an embeddings endpoint. */
export const EMBEDDING_PROVIDERS: readonly Provider[] = ["openai", "openai-compatible"]

const PROVIDER_NEEDS: Record<Provider, { variable: string; expected: string }> = {
  openai: { variable: "OPENAI_API_KEY", expected: "expected an OpenAI API key" },
  anthropic: { variable: "ANTHROPIC_API_KEY", expected: "expected an Anthropic API key" },
  "openai-compatible": {
    variable: "OPENAI_COMPATIBLE_BASE_URL",
    expected: "expected the server's http(s) URL, e.g. http://localhost:11434/v1",
  },
}

function notSet(variable: string, expected: string): ConfigError {
  return new ConfigError(variable, `${variable} is not set: ${expected}`)
}

/** The one line for a variable the schema refused: what was expected and what was given. */
function issueError(issue: z.core.$ZodIssue, present: Record<string, string | undefined>): ConfigError {
  const variable = String(issue.path[0])
  const raw = present[variable]
  if (raw === undefined) return notSet(variable, issue.message)
  const given = issue.code === "custom" && typeof issue.params?.got === "string" ? issue.params.got : JSON.stringify(raw)
  return new ConfigError(variable, `${variable}: ${issue.message}, got ${given}`)
}

/** Reads Steward's configuration from environment variables; throws ConfigError on the first problem. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // An empty value (`KEY=` in .env, or an unset compose variable) means "use the default".
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ""))
  const parsed = schema.safeParse(present)
  if (!parsed.success) throw issueError(parsed.error.issues[0]!, present)
  const vars = parsed.data
  const halfSet = halfSetPlatform(present)
  if (halfSet) throw notSet(halfSet.variable, halfSet.expected)
  const server = serverTimeZone(present.TZ)
  if ("error" in server) throw new ConfigError("TZ", server.error)
  const defaultTimeZone = vars.DEFAULT_TIMEZONE ?? server.zone

  const modelFor = (role: (typeof ROLES)[number]): ModelSpec => {
    const variable = `${role.toUpperCase() as Uppercase<typeof role>}_MODEL` as const
    const own = vars[variable]
    if (own) return { ...own, variable }
    if (vars.MODEL) return { ...vars.MODEL, variable: "MODEL" }
    throw notSet("MODEL", MODEL_EXPECTED)
  }
  const models = { teller: modelFor("teller"), planner: modelFor("planner"), worker: modelFor("worker") }

  const config = toConfig(vars, models, defaultTimeZone)
  for (const spec of Object.values(models)) checkProvider(spec, config)
  const transcribe = config.attachments.transcribeModel
  if (transcribe) {
    // Anthropic has no speech-to-text; openai-compatible servers (faster-whisper, LocalAI…) speak OpenAI's audio API.
    if (transcribe.provider === "anthropic") throw new ConfigError("TRANSCRIBE_MODEL", `TRANSCRIBE_MODEL: expected openai:<model> or openai-compatible:<model> (anthropic has no transcription), got "anthropic:${transcribe.id}"`)
    checkProvider(transcribe, config)
  }
  if (config.embeddingModel) {
    if (!EMBEDDING_PROVIDERS.includes(config.embeddingModel.provider)) {
      throw new ConfigError("EMBEDDING_MODEL", `EMBEDDING_MODEL: ${config.embeddingModel.provider} has no embedding models; expected ${EMBEDDING_PROVIDERS.join(" or ")}, got ${JSON.stringify(env.EMBEDDING_MODEL)}`)
    }
    checkProvider(config.embeddingModel, config)
  }

  // Without these, anyone who finds the endpoint could post forged messages.
  if (vars.TELEGRAM_BOT_TOKEN && vars.TELEGRAM_WEBHOOK_URL && !vars.TELEGRAM_WEBHOOK_SECRET) {
    throw notSet("TELEGRAM_WEBHOOK_SECRET", "expected a secret Telegram sends back with every webhook request, because TELEGRAM_WEBHOOK_URL is set")
  }
  if (vars.SLACK_BOT_TOKEN && !vars.SLACK_APP_TOKEN && !vars.SLACK_SIGNING_SECRET) {
    throw notSet("SLACK_SIGNING_SECRET", "expected the app's signing secret for HTTP mode (or set SLACK_APP_TOKEN for Socket Mode)")
  }

  return config
}

/** The provider SEARCH_PROVIDER names, with what it needs; a provider without it is an error. */
function searchConfig(vars: Vars): SearchConfig | undefined {
  const because = `, because SEARCH_PROVIDER is ${vars.SEARCH_PROVIDER}`
  switch (vars.SEARCH_PROVIDER) {
    case undefined:
      return undefined
    case "searxng":
      if (!vars.SEARXNG_URL) throw notSet("SEARXNG_URL", `expected the SearXNG instance's URL, e.g. http://localhost:8888${because}`)
      return { provider: "searxng", url: vars.SEARXNG_URL }
    case "brave":
      if (!vars.BRAVE_API_KEY) throw notSet("BRAVE_API_KEY", `expected a Brave Search API key${because}`)
      return { provider: "brave", apiKey: vars.BRAVE_API_KEY, apiUrl: vars.BRAVE_API_URL }
    case "tavily":
      if (!vars.TAVILY_API_KEY) throw notSet("TAVILY_API_KEY", `expected a Tavily API key${because}`)
      return { provider: "tavily", apiKey: vars.TAVILY_API_KEY, apiUrl: vars.TAVILY_API_URL }
  }
}

/** Throws when `spec`'s provider lacks what it needs to be called (its key or base URL). */
export function checkProvider(spec: ModelSpec, config: Config): void {
  const { openai, anthropic, openaiCompatible } = config.providers
  const have: Record<Provider, string | undefined> = { openai: openai.apiKey, anthropic: anthropic.apiKey, "openai-compatible": openaiCompatible.baseURL }
  if (have[spec.provider] !== undefined) return
  const need = PROVIDER_NEEDS[spec.provider]
  throw notSet(need.variable, `${need.expected}, because ${spec.variable} uses ${spec.provider}`)
}

function toConfig(vars: Vars, models: Config["models"], defaultTimeZone: string): Config {
  return {
    dataDir: resolve(vars.DATA_DIR),
    storeUrl: vars.STORE_URL,
    models,
    embeddingModel: vars.EMBEDDING_MODEL && { ...vars.EMBEDDING_MODEL, variable: "EMBEDDING_MODEL" },
    providers: {
      openai: { apiKey: vars.OPENAI_API_KEY, baseURL: vars.OPENAI_BASE_URL },
      anthropic: { apiKey: vars.ANTHROPIC_API_KEY, baseURL: vars.ANTHROPIC_BASE_URL },
      openaiCompatible: { baseURL: vars.OPENAI_COMPATIBLE_BASE_URL, apiKey: vars.OPENAI_COMPATIBLE_API_KEY },
    },
    allowedUsers: vars.ALLOWED_USERS,
    logLevel: vars.LOG_LEVEL,
    logFile: vars.LOG_FILE === undefined ? undefined : resolve(vars.LOG_FILE),
    workerConcurrency: vars.WORKER_CONCURRENCY,
    timeouts: { planner: vars.PLANNER_TIMEOUT, worker: vars.WORKER_TIMEOUT },
    maxSteps: { teller: vars.TELLER_MAX_STEPS, planner: vars.PLANNER_MAX_STEPS, worker: vars.WORKER_MAX_STEPS },
    context: { contextTokens: vars.MODEL_CONTEXT_TOKENS, outputTokens: vars.MODEL_OUTPUT_TOKENS },
    contextBudgetTokens: vars.CONTEXT_BUDGET_TOKENS,
    maxRetries: vars.MODEL_MAX_RETRIES,
    maxReplyMessages: vars.MAX_REPLY_MESSAGES,
    streamReplies: vars.STREAM_REPLIES === "on",
    modelTimeoutMs: vars.MODEL_TIMEOUT * 1000,
    permissionsFile: vars.PERMISSIONS_FILE === undefined ? undefined : resolve(vars.PERMISSIONS_FILE),
    telegram: {
      botToken: vars.TELEGRAM_BOT_TOKEN,
      apiRoot: vars.TELEGRAM_API_ROOT,
      webhookUrl: vars.TELEGRAM_WEBHOOK_URL,
      webhookSecret: vars.TELEGRAM_WEBHOOK_SECRET,
      webhookPort: vars.TELEGRAM_WEBHOOK_PORT,
    },
    slack: {
      botToken: vars.SLACK_BOT_TOKEN,
      appToken: vars.SLACK_APP_TOKEN,
      signingSecret: vars.SLACK_SIGNING_SECRET,
      port: vars.SLACK_PORT,
      apiUrl: vars.SLACK_API_URL,
      suggestedPrompts: vars.SLACK_SUGGESTED_PROMPTS,
    },
    memoryScope: vars.MEMORY_SCOPE,
    defaultTimeZone,
    workspace: { quotaBytes: vars.WORKSPACE_MAX_MB * 1024 * 1024 },
    fetch: { maxBytes: vars.FETCH_MAX_BYTES, allowHosts: vars.FETCH_ALLOW_HOSTS },
    hooks: { token: vars.HOOKS_TOKEN, host: vars.HOOKS_HOST, port: vars.HOOKS_PORT },
    // A call that reports progress may pass MCP_TOOL_TIMEOUT, never MCP_TOOL_MAX_SECONDS (nor the other way round).
    mcp: { configFile: vars.MCP_CONFIG === undefined ? undefined : resolve(vars.MCP_CONFIG), toolTimeoutMs: vars.MCP_TOOL_TIMEOUT * 1000, toolMaxMs: Math.max(vars.MCP_TOOL_MAX_SECONDS, vars.MCP_TOOL_TIMEOUT) * 1000, elicitationTimeoutMs: vars.MCP_ELICITATION_TIMEOUT * 1000 },
    search: searchConfig(vars),
    admin: { host: vars.ADMIN_HOST, port: vars.ADMIN_PORT === "off" ? undefined : vars.ADMIN_PORT, token: vars.ADMIN_TOKEN },
    shutdownGraceMs: vars.SHUTDOWN_GRACE * 1000,
    cluster: { leaseSeconds: vars.CLUSTER_LEASE_SECONDS },
    attachments: {
      maxBytes: vars.MAX_ATTACHMENT_MB * 1024 * 1024,
      // Many local models behind openai-compatible servers cannot see images.
      vision: vars.VISION === undefined ? models.teller.provider !== "openai-compatible" : vars.VISION === "on",
      transcribeModel: vars.TRANSCRIBE_MODEL && { ...vars.TRANSCRIBE_MODEL, variable: "TRANSCRIBE_MODEL" },
    },
    quotas: quotasOf(vars),
  }
}

/**
 * Loads a .env file into process.env if it exists. Node's loadEnvFile never overwrites a
 * variable that is already set (even to ""), so the real environment wins over the file.
 */
export function readEnvFile(path = ".env"): void {
  try {
    process.loadEnvFile(path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return
    throw new ConfigError(path, `${path}: could not be read: ${error instanceof Error ? error.message : String(error)}`)
  }
}

/** Where the state lives, for commands that need nothing else of the configuration (the CLI). */
export function dataDirOf(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(schema.shape.DATA_DIR.parse(env.DATA_DIR || undefined))
}

/** The Postgres store's URL (STORE_URL), undefined for SQLite; throws ConfigError on a bad one,
 *  for commands that need nothing else of the configuration (the CLI). */
export const storeUrlOf = (env: NodeJS.ProcessEnv = process.env): string | undefined => settingOf("STORE_URL", env)

/** One variable as start-up reads it (its default when unset), for commands that need it and
 *  nothing else — `steward users` needs ALLOWED_USERS, not MODEL; ConfigError on a bad value. */
export function settingOf<K extends keyof typeof schema.shape>(name: K, env: NodeJS.ProcessEnv = process.env): z.output<(typeof schema.shape)[K]> {
  const raw = env[name] || undefined
  const parsed = schema.shape[name].safeParse(raw)
  if (!parsed.success) throw issueError({ ...parsed.error.issues[0]!, path: [name] }, { [name]: raw })
  return parsed.data as z.output<(typeof schema.shape)[K]>
}

/** For entry points: `.env`, then the configuration; a mistake in either is reported in one
 *  line, not a stack trace, and exits with code 2. */
export function configOrExit(env: NodeJS.ProcessEnv = process.env, envFile?: string): Config {
  return orExit(() => {
    if (envFile !== undefined) readEnvFile(envFile)
    return loadConfig(env)
  })
}

/** Runs `read`; a ConfigError it throws is printed as one line and ends the process with code 2. */
export function orExit<T>(read: () => T): T {
  try {
    return read()
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    process.stderr.write(`steward: ${error.message}\n`)
    process.exit(2)
  }
}

/** The chat channels a configuration starts: Slack and Telegram when their tokens are set (both
 *  may run in one process), else the console. */
export function chatChannels(config: Config): Array<"telegram" | "slack" | "console"> {
  const chat: Array<"telegram" | "slack"> = []
  if (config.telegram.botToken) chat.push("telegram")
  if (config.slack.botToken) chat.push("slack")
  return chat.length > 0 ? chat : ["console"]
}
