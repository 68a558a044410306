import type { LanguageModel } from "ai"
import { createAnthropic, type AnthropicProvider } from "@ai-sdk/anthropic"
import { createOpenAI, type OpenAIProvider } from "@ai-sdk/openai"
import { createOpenAICompatible, type OpenAICompatibleProvider } from "@ai-sdk/openai-compatible"
import type { Config, ModelSpec } from "../config/config.ts"

interface Providers {
  openai?: OpenAIProvider
  anthropic?: AnthropicProvider
  compatible?: OpenAICompatibleProvider
}

// Keyed by config so that the three roles share one provider (and its settings) per provider,
// while a different config (tests, reload) never sees another's keys.
const cache = new WeakMap<Config, Providers>()

/** The AI SDK model for one role's ModelSpec. */
export function resolveModel(spec: ModelSpec, config: Config): LanguageModel {
  let providers = cache.get(config)
  if (!providers) {
    providers = {}
    cache.set(config, providers)
  }
  switch (spec.provider) {
    case "openai":
      providers.openai ??= createOpenAI(config.providers.openai)
      // Chat Completions rather than the default Responses API: OPENAI_BASE_URL often points
      // at proxies and gateways that only implement /chat/completions.
      return providers.openai.chat(spec.id)
    case "anthropic":
      providers.anthropic ??= createAnthropic(config.providers.anthropic)
      return providers.anthropic(spec.id)
    case "openai-compatible": {
      const { baseURL, apiKey } = config.providers.openaiCompatible
      // loadConfig refuses a config that uses this provider without a base URL.
      if (baseURL === undefined) throw new Error(`${spec.variable} uses openai-compatible but OPENAI_COMPATIBLE_BASE_URL is not set`)
      // includeUsage asks the server for token counts in streamed responses; compaction needs them.
      providers.compatible ??= createOpenAICompatible({ name: "openai-compatible", baseURL, apiKey, includeUsage: true })
      return providers.compatible.chatModel(spec.id)
    }
  }
}
