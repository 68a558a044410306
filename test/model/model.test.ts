import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { createOpenAICompatible } from "@ai-sdk/openai-compatible"
import { generateText, type LanguageModel } from "ai"
import { describe, expect, it } from "vitest"
import { loadConfig } from "../../src/config/config.ts"
import { fetchWithTimeout, resolveModel } from "../../src/model/model.ts"

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

describe("fetchWithTimeout", () => {
  /** A chat-completions endpoint whose first answer stalls: before its headers, or after them mid-body. */
  async function stallingServer(stall: "headers" | "body") {
    let requests = 0
    const sockets = new Set<import("node:net").Socket>()
    const server = createServer((req, res) => {
      req.resume()
      if (++requests === 1) {
        if (stall === "body") {
          res.writeHead(200, { "content-type": "application/json" })
          res.write('{"id":"c1",')
        }
        return // never finished
      }
      res.writeHead(200, { "content-type": "application/json" })
      res.end(JSON.stringify({ id: "c2", object: "chat.completion", created: 0, model: "m", choices: [{ index: 0, message: { role: "assistant", content: "answered" }, finish_reason: "stop" }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }))
    })
    server.on("connection", (socket) => (sockets.add(socket), socket.on("close", () => sockets.delete(socket))))
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const model = createOpenAICompatible({ name: "t", baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, fetch: fetchWithTimeout(300) }).chatModel("m")
    return {
      model,
      requests: () => requests,
      close: () => new Promise<void>((resolve) => (sockets.forEach((s) => s.destroy()), server.close(() => resolve()))),
    }
  }

  it.each(["headers", "body"] as const)("retries a request whose %s stall past the deadline", async (stall) => {
    const server = await stallingServer(stall)
    try {
      const result = await generateText({ model: server.model, prompt: "hi", maxRetries: 1 })
      expect(result.text).toBe("answered")
      expect(server.requests()).toBe(2)
    } finally {
      await server.close()
    }
  })

  it("leaves a caller's abort an abort, not retried", async () => {
    const server = await stallingServer("headers")
    try {
      const abort = new AbortController()
      setTimeout(() => abort.abort(new Error("cancelled by the user")), 50)
      await expect(generateText({ model: server.model, prompt: "hi", maxRetries: 2, abortSignal: abort.signal })).rejects.toThrow("cancelled by the user")
      expect(server.requests()).toBe(1)
    } finally {
      await server.close()
    }
  })
})
