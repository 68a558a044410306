import type { Config } from "../config/config.ts"

/** The parts of the configuration that hold secrets. */
export type SecretSources = Partial<Pick<Config, "telegram" | "slack" | "providers" | "hooks" | "storeUrl" | "search" | "admin">>

/** What a secret is replaced with in a log line. */
export const REDACTED = "[redacted]"

// Shorter values (a test's "pw", an empty key) would blank out ordinary words of every line.
const MIN_SECRET_LENGTH = 4

/** Every secret the configuration holds: tokens, signing secrets, API keys, the hooks and console
 *  tokens and the store's database password. */
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
  ]
  return [...new Set(secrets)].filter((secret): secret is string => secret !== undefined && secret.length >= MIN_SECRET_LENGTH)
}

/** A Postgres URL's password, as written in the URL and decoded (`user:pa%40ss@` and `?password=`). */
function storePasswords(storeUrl: string | undefined): string[] {
  if (!storeUrl || !URL.canParse(storeUrl)) return []
  const url = new URL(storeUrl)
  const passwords = [url.password, url.searchParams.get("password") ?? ""]
  return passwords.flatMap((password) => (password ? [password, safeDecode(password)] : []))
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
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
