import { wrapLanguageModel, type LanguageModel, type LanguageModelMiddleware, type TranscriptionModel } from "ai"
import { createAnthropic, type AnthropicProvider } from "@ai-sdk/anthropic"
import { createOpenAI, type OpenAIProvider } from "@ai-sdk/openai"
import { createOpenAICompatible, type OpenAICompatibleProvider } from "@ai-sdk/openai-compatible"
import type { Config, ModelSpec } from "../config/config.ts"

interface Providers {
  fetch: typeof fetch
  openai?: OpenAIProvider
  anthropic?: AnthropicProvider
  compatible?: OpenAICompatibleProvider
  /** OpenAI's client pointed at the openai-compatible server, for its OpenAI-style audio API. */
  compatibleAudio?: OpenAIProvider
}

// Keyed by config so that the three roles share one provider (and its settings) per provider,
// while a different config (tests, reload) never sees another's keys.
const cache = new WeakMap<Config, Providers>()

/**
 * fetch with a deadline per request, response body included. A provider that never answers
 * would otherwise hold a turn until undici's own 300 s limits, and the AI SDK's `timeout` spans
 * all retries and is not retried itself. The deadline aborts with an ETIMEDOUT error, which the
 * SDK retries with backoff like any network error — before the headers and while reading the
 * body alike. A caller's abort stays an abort.
 */
export function fetchWithTimeout(timeoutMs: number, base: typeof fetch = fetch): typeof fetch {
  return (input, init) => {
    const deadline = new AbortController()
    const timer = setTimeout(() => deadline.abort(Object.assign(new Error(`the model did not answer within ${timeoutMs / 1000} s`), { code: "ETIMEDOUT" })), timeoutMs)
    // A deadline after the response was read aborts nothing; it must not keep the process up.
    timer.unref()
    const signal = init?.signal ? AbortSignal.any([init.signal, deadline.signal]) : deadline.signal
    return base(input, { ...init, signal })
  }
}

function providersOf(config: Config): Providers {
  let providers = cache.get(config)
  if (!providers) {
    providers = { fetch: fetchWithTimeout(config.modelTimeoutMs) }
    cache.set(config, providers)
  }
  return providers
}

/** The AI SDK model for one role's ModelSpec. */
export function resolveModel(spec: ModelSpec, config: Config): LanguageModel {
  const providers = providersOf(config)
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

/** A part of a provider's streamed answer (the provider spec's type, reached through the SDK's). */
type StreamPart = Awaited<ReturnType<Parameters<NonNullable<LanguageModelMiddleware["wrapStream"]>>[0]["doStream"]>>["stream"] extends ReadableStream<infer Part> ? Part : never

/** Token counts of one model call; cachedInput is part of input. */
export interface ModelUsage {
  input?: number
  cachedInput?: number
  output?: number
}

/** Told of every model call (the admin server's metrics). */
export interface ModelCallSink {
  modelCall(role: string, outcome: "ok" | "error", usage?: ModelUsage): void
}

/** `model` with each call (Steward's agent loop calls generateText, or streamText when replies
 *  stream) and its tokens told to `sink` under `role`. */
export function countedModel(model: LanguageModel, role: string, sink: ModelCallSink): LanguageModel {
  if (typeof model === "string" || model.specificationVersion !== "v3") return model
  const counting: LanguageModelMiddleware = {
    specificationVersion: "v3",
    async wrapGenerate({ doGenerate }) {
      try {
        const result = await doGenerate()
        const { inputTokens, outputTokens } = result.usage
        sink.modelCall(role, "ok", { input: inputTokens.total, cachedInput: inputTokens.cacheRead, output: outputTokens.total })
        return result
      } catch (error) {
        sink.modelCall(role, "error")
        throw error
      }
    },
    async wrapStream({ doStream }) {
      try {
        const result = await doStream()
        // A streamed call's usage arrives with its last part.
        const counted = new TransformStream<StreamPart, StreamPart>({
          transform(part, controller) {
            if (part.type === "finish") sink.modelCall(role, "ok", { input: part.usage.inputTokens.total, cachedInput: part.usage.inputTokens.cacheRead, output: part.usage.outputTokens.total })
            if (part.type === "error") sink.modelCall(role, "error")
            controller.enqueue(part)
          },
        })
        return { ...result, stream: result.stream.pipeThrough(counted) }
      } catch (error) {
        sink.modelCall(role, "error")
        throw error
      }
    },
  }
  return wrapLanguageModel({ model, middleware: counting })
}

/** The speech-to-text model of TRANSCRIBE_MODEL, with the same provider settings as the chat
 *  models. loadConfig refuses providers without transcription (anthropic). */
export function resolveTranscriptionModel(spec: ModelSpec, config: Config): TranscriptionModel {
  const providers = providersOf(config)
  if (spec.provider === "openai") {
    providers.openai ??= createOpenAI({ ...config.providers.openai, fetch: providers.fetch })
    return providers.openai.transcription(spec.id)
  }
  const { baseURL, apiKey } = config.providers.openaiCompatible
  if (spec.provider !== "openai-compatible" || baseURL === undefined) throw new Error(`${spec.variable}: ${spec.provider} has no transcription model here`)
  providers.compatibleAudio ??= createOpenAI({ baseURL, apiKey: apiKey ?? "none", fetch: providers.fetch })
  return providers.compatibleAudio.transcription(spec.id)
}
