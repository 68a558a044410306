import { APICallError } from "ai"
import { describe, expect, it } from "vitest"
import { modelErrorFields } from "../../src/log/error-fields.ts"

const WORDS = "my dentist is Dr. Quillfeather on Elm Street"
const SYSTEM = "You are the Teller, who talks to the user and never does the work itself."

/** A failed call as the AI SDK reports it, with what was sent. */
const failed = (message: string, requestBodyValues: unknown) =>
  new APICallError({ message, url: "https://api.example.com/v1/messages", requestBodyValues, statusCode: 400, responseHeaders: { "request-id": "req_1" }, isRetryable: false })

describe("a failed model call's log fields", () => {
  it.each([
    ["OpenAI-compatible", { model: "m", messages: [{ role: "system", content: SYSTEM }, { role: "user", content: WORDS }] }],
    ["Anthropic", { model: "m", system: [{ type: "text", text: SYSTEM }], messages: [{ role: "user", content: [{ type: "text", text: `<env>\n</env>\n${WORDS}` }] }] }],
  ])("keep a %s provider's words but not the user's or the prompt it quotes back", (_, body) => {
    const fields = modelErrorFields(failed(`invalid request: content "${WORDS}" is not allowed after "${SYSTEM.slice(0, 40)}"`, body))
    expect(fields.message).not.toContain("Quillfeather")
    expect(fields.message).not.toContain("You are the Teller")
    // A quote mark next to the echo may go with it (the request's JSON has it too).
    expect(fields.message).toMatch(/^invalid request: content "?\[…\]"? is not allowed after "?\[…\]"?$/)
    expect(fields).toMatchObject({ status: 400, provider: "api.example.com", model: "m", requestId: "req_1" })
  })

  it("keep a message that quotes nothing of the request whole", () => {
    expect(modelErrorFields(failed("Incorrect API key provided: sk-…abcd. You can find your API key at platform", { model: "m", messages: [] })).message).toBe(
      "Incorrect API key provided: sk-…abcd. You can find your API key at platform",
    )
  })

  it("stay short against a large request and a large echo", () => {
    const big = "z".repeat(200_000)
    const began = performance.now()
    const fields = modelErrorFields(failed(`bad: ${big}`, { model: "m", messages: [{ role: "user", content: big }] }))
    expect(performance.now() - began).toBeLessThan(1000)
    expect(fields.message).toBe("bad: […]")
  })
})
