import type { Config, ModelSpec, Provider } from "../config/config.ts"
import { CHECK_TIMEOUT_MS, failed, passed, reason, type Check } from "../doctor/check.ts"

interface Endpoint {
  baseURL: string
  headers: Record<string, string>
  /** The variable that holds the key, named when the provider rejects it. */
  keyVariable: string
  urlVariable: string
}

function endpointOf(provider: Provider, config: Config): Endpoint {
  const { openai, anthropic, openaiCompatible } = config.providers
  switch (provider) {
    case "openai":
      return { baseURL: openai.baseURL ?? "https://api.openai.com/v1", headers: { authorization: `Bearer ${openai.apiKey ?? ""}` }, keyVariable: "OPENAI_API_KEY", urlVariable: "OPENAI_BASE_URL" }
    case "anthropic":
      return { baseURL: anthropic.baseURL ?? "https://api.anthropic.com/v1", headers: { "x-api-key": anthropic.apiKey ?? "", "anthropic-version": "2023-06-01" }, keyVariable: "ANTHROPIC_API_KEY", urlVariable: "ANTHROPIC_BASE_URL" }
    case "openai-compatible":
      return { baseURL: openaiCompatible.baseURL ?? "", headers: openaiCompatible.apiKey ? { authorization: `Bearer ${openaiCompatible.apiKey}` } : {}, keyVariable: "OPENAI_COMPATIBLE_API_KEY", urlVariable: "OPENAI_COMPATIBLE_BASE_URL" }
  }
}

/**
 * Whether a model answers, without paying for a completion where the provider offers a free
 * call: Anthropic's `GET /models/<id>`, the model list (`GET /models`) elsewhere; a server
 * without a model list is asked for a 1-token completion.
 */
export async function checkModel(spec: ModelSpec, config: Config, roles: string[], fetchImpl: typeof fetch = fetch): Promise<Check> {
  const name = `model ${spec.provider}:${spec.id} (${roles.join(", ")})`
  const endpoint = endpointOf(spec.provider, config)
  const base = endpoint.baseURL.replace(/\/+$/, "")
  const get = (path: string, init: RequestInit = {}) => fetchImpl(`${base}${path}`, { ...init, headers: { ...endpoint.headers, ...(init.headers as Record<string, string>) }, signal: AbortSignal.timeout(CHECK_TIMEOUT_MS) })
  const rejected = failed(name, `the key in ${endpoint.keyVariable} was rejected`, `set ${endpoint.keyVariable} to a valid key of ${spec.provider}`)
  const notFound = failed(name, `model ${spec.id} not found at ${base}`, `correct ${spec.variable} (a model id the provider lists), or ${endpoint.urlVariable}`)
  try {
    if (spec.provider === "anthropic") {
      const response = await get(`/models/${encodeURIComponent(spec.id)}`)
      if (response.status === 401 || response.status === 403) return rejected
      if (response.status === 404) return notFound
      if (!response.ok) return failed(name, `${base} answered ${response.status}`, "try again later, or check ANTHROPIC_BASE_URL")
      return passed(name, "the model answers")
    }
    const listed = await get("/models")
    if (listed.status === 401 || listed.status === 403) return rejected
    if (listed.ok) {
      const ids = ((await listed.json().catch(() => ({}))) as { data?: Array<{ id?: string }> }).data?.map((model) => model.id)
      if (ids) return ids.includes(spec.id) ? passed(name, "the model is listed") : notFound
    }
    // No model list here: one token of completion says as much.
    const completion = await get("/chat/completions", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: spec.id, max_tokens: 1, messages: [{ role: "user", content: "ping" }] }) })
    if (completion.status === 401 || completion.status === 403) return rejected
    if (completion.status === 404) return notFound
    if (!completion.ok) return failed(name, `${base} answered ${completion.status} to a 1-token completion`, `check ${spec.variable} and ${endpoint.urlVariable}`)
    return passed(name, "the model answers")
  } catch (error) {
    return failed(name, `could not reach ${base}: ${reason(error)}`, `check ${endpoint.urlVariable} and this machine's network`)
  }
}

/** Each distinct model of the three roles, checked once. */
export async function checkModels(config: Config, fetchImpl: typeof fetch = fetch): Promise<Check[]> {
  const byModel = new Map<string, { spec: ModelSpec; roles: string[] }>()
  for (const [role, spec] of Object.entries(config.models)) {
    const key = `${spec.provider}:${spec.id}`
    const entry = byModel.get(key) ?? { spec, roles: [] }
    entry.roles.push(role)
    byModel.set(key, entry)
  }
  return Promise.all([...byModel.values()].map(({ spec, roles }) => checkModel(spec, config, roles, fetchImpl)))
}
