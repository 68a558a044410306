import type { LanguageModel } from "ai"
import { createAnthropic, type AnthropicProvider } from "@ai-sdk/anthropic"
import { createOpenAI, type OpenAIProvider } from "@ai-sdk/openai"
import { createOpenAICompatible, type OpenAICompatibleProvider } from "@ai-sdk/openai-compatible"
import type { Config, ModelSpec } from "../config/config.ts"

interface Providers {
  fetch: typeof fetch
  openai?: OpenAIProvider
  anthropic?: AnthropicProvider
  compatible?: OpenAICompatibleProvider
}

// Keyed by config so that the three roles share one provider (and its settings) per provider,
// while a different config (tests, reload) never sees another's keys.
const cache = new WeakMap<Config, Providers>()

/**
 * fetch with a deadline per request. A provider that never answers would otherwise hold a turn
 * for undici's 300 s, and the AI SDK's own `timeout` spans all retries and is not retried. The
 * timeout is reported as a failed fetch, which the SDK retries with backoff like a network error.
 */
export function fetchWithTimeout(timeoutMs: number, base: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const deadline = AbortSignal.timeout(timeoutMs)
    const signal = init?.signal ? AbortSignal.any([init.signal, deadline]) : deadline
    try {
      return await base(input, { ...init, signal })
    } catch (error) {
      if (!deadline.aborted || init?.signal?.aborted) throw error
      throw new TypeError("fetch failed", { cause: new Error(`the model did not answer within ${timeoutMs / 1000} s`) })
    }
  }
}

/** The AI SDK model for one role's ModelSpec. */
export function resolveModel(spec: ModelSpec, config: Config): LanguageModel {
  let providers = cache.get(config)
  if (!providers) {
    providers = { fetch: fetchWithTimeout(config.modelTimeoutMs) }
    cache.set(config, providers)
  }
  switch (spec.provider) {
    case "openai":
      providers.openai ??= createOpenAI({ ...config.providers.openai, fetch: providers.fetch })
      // Chat Completions rather than the default Responses API: OPENAI_BASE_URL often points
      // at proxies and gateways that only implement /chat/completions.
      return providers.openai.chat(spec.id)
    case "anthropic":
      providers.anthropic ??= createAnthropic({ ...config.providers.anthropic, fetch: providers.fetch })
      return providers.anthropic(spec.id)
    case "openai-compatible": {
      const { baseURL, apiKey } = config.providers.openaiCompatible
      // loadConfig refuses a config that uses this provider without a base URL.
      if (baseURL === undefined) throw new Error(`${spec.variable} uses openai-compatible but OPENAI_COMPATIBLE_BASE_URL is not set`)
      // includeUsage asks the server for token counts in streamed responses; compaction needs them.
      providers.compatible ??= createOpenAICompatible({ name: "openai-compatible", baseURL, apiKey, includeUsage: true, fetch: providers.fetch })
      return providers.compatible.chatModel(spec.id)
    }
  }
}
