import { describe, expect, it } from "vitest"
import { sample } from "../../src/mcp/sampling.ts"
import type { CompletionRequest } from "../../src/tool/capabilities.ts"
import type { ToolContext } from "../../src/tool/tool.ts"

// A server's sampling request as third-party servers write them: a conversation of several
// messages, an image, audio, includeContext, a token limit that is reached.

describe("sampling", () => {
  it("passes the system prompt, every message, images and the token limit; leaves out audio and ignores includeContext", async () => {
    const requests: CompletionRequest[] = []
    const ctx = {
      permit: async () => true,
      complete: async (request: CompletionRequest) => (requests.push(request), { text: "a cat", model: "fake:m", finishReason: "length" }),
    } as unknown as ToolContext
    const result = await sample(ctx, "srv", {
      systemPrompt: "Describe",
      includeContext: "allServers",
      maxTokens: 5,
      messages: [
        { role: "user", content: { type: "text", text: "Hello" } },
        { role: "assistant", content: { type: "text", text: "Hi, send it" } },
        { role: "user", content: [{ type: "image", data: "aGk=", mimeType: "image/png" }, { type: "audio", data: "aGk=", mimeType: "audio/wav" }, { type: "text", text: "What is it?" }] },
      ],
    } as never)
    expect(result).toEqual({ role: "assistant", content: { type: "text", text: "a cat" }, model: "fake:m", stopReason: "maxTokens" })
    expect(requests).toEqual([
      {
        system: "Describe",
        maxOutputTokens: 5,
        messages: [
          { role: "user", content: [{ type: "text", text: "Hello" }] },
          { role: "assistant", content: "Hi, send it" },
          { role: "user", content: [{ type: "image", image: "aGk=", mediaType: "image/png" }, { type: "text", text: "[audio left out]" }, { type: "text", text: "What is it?" }] },
        ],
      },
    ])
  })
})
