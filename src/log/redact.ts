import { readFileSync } from "node:fs"
import type { Config } from "../config/config.ts"
import { percentDecoded } from "../core/percent-decoded.ts"

/** The parts of the configuration that hold secrets. */
export type SecretSources = Partial<Pick<Config, "telegram" | "slack" | "providers" | "hooks" | "storeUrl" | "search" | "admin">> & { mcp?: Pick<Config["mcp"], "configFile"> }

/** What a secret is replaced with in a log line. */
export const REDACTED = "[redacted]"

// Shorter values (a test's "pw", an empty key) would blank out ordinary words of every line.
const MIN_SECRET_LENGTH = 4

/** Every secret the configuration holds: tokens, signing secrets, API keys, the hooks and admin
 *  tokens, the store's database password, a password in SEARXNG_URL, and what MCP_CONFIG gives
 *  its servers to authenticate with. */
export function secretsOf(config: SecretSources): string[] {
  const { telegram, slack, providers, hooks, search } = config
  const secrets = [
    telegram?.botToken,
    telegram?.webhookSecret,
    slack?.botToken,
    slack?.appToken,
    slack?.signingSecret,
    providers?.openai.apiKey,
    providers?.anthropic.apiKey,
    providers?.openaiCompatible.apiKey,
    hooks?.token,
    config.admin?.token,
    search && "apiKey" in search ? search.apiKey : undefined,
    ...storePasswords(config.storeUrl),
    ...(search && "url" in search ? urlCredentials(search.url) : []),
    ...mcpSecrets(config.mcp?.configFile),
  ]
  return [...new Set(secrets)].filter((secret): secret is string => secret !== undefined && secret.length >= MIN_SECRET_LENGTH)
}

/** A Postgres URL's password, as written in the URL and decoded (`user:pa%40ss@` and `?password=`). */
function storePasswords(storeUrl: string | undefined): string[] {
  if (!storeUrl || !URL.canParse(storeUrl)) return []
  const url = new URL(storeUrl)
  const passwords = [url.password, url.searchParams.get("password") ?? ""]
  return passwords.flatMap((password) => (password ? [password, percentDecoded(password) ?? password] : []))
}

/** A URL's password (as written and decoded) and the Basic credentials made of it, as an
 *  Authorization header carries them. */
export function urlCredentials(raw: string): string[] {
  if (!URL.canParse(raw)) return []
  const { username, password } = new URL(raw)
  if (!password) return []
  const plain = percentDecoded(password) ?? password
  return [password, plain, basicCredentials(percentDecoded(username) ?? username, plain)]
}

/** `user:password` in base64: the value of a Basic Authorization header after "Basic ". */
export const basicCredentials = (user: string, password: string) => Buffer.from(`${user}:${password}`).toString("base64")

/** Names of environment variables and headers that hold credentials. */
const CREDENTIAL_NAME = /key|token|secret|pass|auth|credential|private|cookie|session/i

/**
 * What MCP_CONFIG gives its servers to authenticate with: the values of environment variables
 * and headers whose names say so (an `Authorization: Bearer …` header's token on its own too),
 * and a password in a server's URL. Other values (a path, "production") are not secrets and
 * would blank out ordinary words. A file that cannot be read has none: start-up refuses it.
 */
function mcpSecrets(configFile: string | undefined): string[] {
  if (!configFile) return []
  let servers: Record<string, { env?: Record<string, unknown>; headers?: Record<string, unknown>; url?: unknown }>
  try {
    servers = (JSON.parse(readFileSync(configFile, "utf8")) as { mcpServers?: typeof servers }).mcpServers ?? {}
  } catch {
    return []
  }
  const named = (values: Record<string, unknown> | undefined) =>
    Object.entries(values ?? {}).flatMap(([name, value]) => (CREDENTIAL_NAME.test(name) && typeof value === "string" ? [value, ...value.split(/\s+/).slice(1)] : []))
  return Object.values(servers).flatMap((server) => [...named(server?.env), ...named(server?.headers), ...(typeof server?.url === "string" ? urlCredentials(server.url) : [])])
}

/** The spellings a secret takes in a log line: as is, in a URL path or query (percent-encoded, a
 *  space as `%20` or `+`), and each of those escaped inside a JSON string. */
function spellings(secret: string): string[] {
  const encoded = [secret, encodeURIComponent(secret), encodeURI(secret), new URLSearchParams({ s: secret }).toString().slice(2)]
  return [...new Set(encoded.flatMap((form) => [form, JSON.stringify(form).slice(1, -1)]))]
}

/**
 * A function that replaces every spelling of every secret in a text with `[redacted]`. Matching
 * ignores case, as percent-escapes may come in either (`%2F`, `%2f`). Longest spellings first, so
 * a secret inside another is not replaced piecemeal.
 */
export function redactor(secrets: readonly string[]): (text: string) => string {
  const forms = [...new Set(secrets.flatMap(spellings))].sort((a, b) => b.length - a.length)
  if (forms.length === 0) return (text) => text
  const pattern = new RegExp(forms.map((form) => form.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"), "gi")
  return (text) => text.replace(pattern, REDACTED)
}
