import type { AllowList } from "../web/address-policy.ts"
import type { AllowedUsers, Provider } from "./fields.ts"
import type { Quotas } from "./quotas.ts"

/**
 * What Steward's settings are, once read: the types the rest of Steward works with and the error
 * a bad value raises. How they are read from the environment (the variables, their checks and
 * defaults) is config.ts.
 */

export interface ModelSpec {
  provider: Provider
  id: string
  /** The environment variable the spec came from, so later errors can point the user at it. */
  variable: string
}

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const
export type LogLevel = (typeof LOG_LEVELS)[number]


export interface Config {
  dataDir: string
  /** A Postgres URL to keep the state in; none: SQLite in dataDir. */
  storeUrl?: string
  models: { teller: ModelSpec; planner: ModelSpec; worker: ModelSpec }
  /** Embeddings for hybrid memory search; none = lexical search only. */
  embeddingModel?: ModelSpec
  providers: {
    openai: { apiKey?: string; baseURL?: string }
    anthropic: { apiKey?: string; baseURL?: string }
    openaiCompatible: { baseURL?: string; apiKey?: string }
  }
  allowedUsers: AllowedUsers
  logLevel: LogLevel
  logFile?: string
  workerConcurrency: number
  /** Seconds. */
  timeouts: { planner: number; worker: number }
  maxSteps: { teller: number; planner: number; worker: number }
  context: { contextTokens: number; outputTokens: number }
  /** The most a prompt may hold (CONTEXT_BUDGET_TOKENS): what every call costs, not the window. */
  contextBudgetTokens: number
  maxRetries: number
  /** A reply longer than this many messages goes out as its first part plus the whole text as a file. */
  maxReplyMessages: number
  /** How long one model request may go without a response before it is retried. */
  modelTimeoutMs: number
  /** STREAM_REPLIES: the Teller's answers are shown while they are written (channels that can). */
  streamReplies: boolean
  permissionsFile?: string
  telegram: {
    botToken?: string
    apiRoot?: string
    webhookUrl?: string
    webhookSecret?: string
    webhookPort: number
  }
  slack: {
    botToken?: string
    appToken?: string
    signingSecret?: string
    port: number
    apiUrl?: string
    /** SLACK_SUGGESTED_PROMPTS: what a new assistant thread suggests (default: a few of Steward's own). */
    suggestedPrompts?: string[]
  }
  memoryScope: "user" | "shared"
  /** The IANA zone of a user who has none of their own (DEFAULT_TIMEZONE; default: the server's). */
  defaultTimeZone: string
  /** Each user's file workspace: how much it may hold. */
  workspace: { quotaBytes: number }
  /** fetch_url: how much of a body it reads, and which non-public hosts it may reach. */
  fetch: { maxBytes: number; allowHosts: AllowList }
  /** POST /hooks/<name> raises an event, when a token is set. */
  hooks: { token?: string; host: string; port: number }
  /** MCP servers: the JSON file that lists them; how long one tool call may go without an answer
   *  or progress, and at most (MCP_TOOL_MAX_SECONDS); how long a server's question waits. */
  mcp: { configFile?: string; toolTimeoutMs: number; toolMaxMs: number; elicitationTimeoutMs: number }
  /** The web_search tool's provider; the tool is offered only when one is set. */
  search?: SearchConfig
  /** GET /healthz and /metrics; no port: off. token: ADMIN_TOKEN, which turns the owner console
   *  on (src/console/). */
  admin: { host: string; port?: number; token?: string }
  /** How long SIGTERM/SIGINT lets work under way finish before it is stopped. */
  shutdownGraceMs: number
  /** Several processes on one Postgres (STORE_URL): a process whose heartbeat has not changed
   *  this long is taken for hung, and the tasks it ran run again elsewhere (a dead one is seen
   *  at once, by its lost connection). */
  cluster: { leaseSeconds: number }
  /** Files users send: the largest one saved, whether images reach the Teller's model as
   *  images, and the model that turns voice notes into text (none: voice is not set up). */
  attachments: { maxBytes: number; vision: boolean; transcribeModel?: ModelSpec }
  /** Per-user limits for everyone but the owners (QUOTA_*). */
  quotas: Quotas
}

export const SEARCH_PROVIDERS = ["searxng", "brave", "tavily"] as const
export type SearchConfig =
  | { provider: "searxng"; url: string }
  | { provider: "brave"; apiKey: string; apiUrl: string }
  | { provider: "tavily"; apiKey: string; apiUrl: string }

/** A configuration problem; `message` is one line meant for the person editing `.env`. */
export class ConfigError extends Error {
  override name = "ConfigError"
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(message)
  }
}
