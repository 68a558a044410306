import type { LanguageModel } from "ai"
import { describe, expect, it } from "vitest"
import { loadConfig } from "../src/config/config.ts"
import { resolveModel } from "../src/model/model.ts"

function describeModel(model: LanguageModel) {
  if (typeof model === "string") throw new Error(`expected a model object, got the string ${model}`)
  return { provider: model.provider, modelId: model.modelId }
}

const config = loadConfig({
  MODEL: "openai:gpt-4.1-mini",
  PLANNER_MODEL: "anthropic:claude-sonnet-4-5",
  WORKER_MODEL: "openai-compatible:qwen2.5:7b",
  OPENAI_API_KEY: "sk-test",
  ANTHROPIC_API_KEY: "ak-test",
  OPENAI_COMPATIBLE_BASE_URL: "http://localhost:11434/v1",
})

describe("resolveModel", () => {
  it("uses OpenAI's chat completions API, not the Responses API", () => {
    expect(describeModel(resolveModel(config.models.teller, config))).toEqual({
      provider: "openai.chat",
      modelId: "gpt-4.1-mini",
    })
  })

  it("resolves Anthropic models", () => {
    expect(describeModel(resolveModel(config.models.planner, config))).toEqual({
      provider: "anthropic.messages",
      modelId: "claude-sonnet-4-5",
    })
  })

  it("resolves OpenAI-compatible models with colons in the id", () => {
    expect(describeModel(resolveModel(config.models.worker, config))).toEqual({
      provider: "openai-compatible.chat",
      modelId: "qwen2.5:7b",
    })
  })
})
