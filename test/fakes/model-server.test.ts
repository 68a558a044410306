import { afterEach, describe, expect, it } from "vitest"
import { createOpenAICompatible } from "@ai-sdk/openai-compatible"
import { APICallError, generateText, RetryError, stepCountIs, streamText, tool } from "ai"
import { z } from "zod"
import { byRole, sequence, startModelServer, type ModelServer, type Script } from "./model-server.ts"

let server: ModelServer | undefined

afterEach(async () => {
  await server?.close()
  server = undefined
})

async function start(script: Script) {
  server = await startModelServer(script)
  const provider = createOpenAICompatible({ name: "fake", baseURL: server.url, apiKey: "x" })
  return { server, model: provider("scripted") }
}

const weather = tool({
  description: "Look up the weather",
  inputSchema: z.object({ city: z.string(), days: z.number().int() }),
})

describe("fake model server with the real AI SDK provider", () => {
  it("answers plain text and records the request", async () => {
    const { server, model } = await start(sequence({ text: "Hello there" }))
    const result = await generateText({
      model,
      system: "# Role: teller\nYou are Steward.",
      prompt: "hi",
      maxRetries: 0,
    })
    expect(result.text).toBe("Hello there")
    expect(result.finishReason).toBe("stop")
    expect(server.requests).toHaveLength(1)
    const req = server.requests[0]!
    expect(req.role).toBe("teller")
    expect(req.stream).toBe(false)
    expect(req.body.model).toBe("scripted")
    expect(req.body.messages[0]).toEqual({ role: "system", content: "# Role: teller\nYou are Steward." })
    expect(req.headers.authorization).toBe("Bearer x")
  })

  it("passes helpers to the script and parses a tool call into result.toolCalls", async () => {
    const seen: Array<{ toolNames: string[]; lastUserText: string; system: string }> = []
    const { server, model } = await start((req) => {
      seen.push({ toolNames: req.toolNames, lastUserText: req.lastUserText, system: req.system })
      return { toolCalls: [{ name: "weather", args: { city: "Oslo", days: 3 }, id: "call_w1" }] }
    })
    const result = await generateText({
      model,
      system: "# Role: planner",
      prompt: "weather in Oslo?",
      tools: { weather },
      maxRetries: 0,
    })
    expect(seen).toEqual([{ toolNames: ["weather"], lastUserText: "weather in Oslo?", system: "# Role: planner" }])
    expect(result.finishReason).toBe("tool-calls")
    expect(result.toolCalls).toHaveLength(1)
    expect(result.toolCalls[0]).toMatchObject({
      type: "tool-call",
      toolCallId: "call_w1",
      toolName: "weather",
      input: { city: "Oslo", days: 3 },
    })
    expect(result.toolCalls[0]!.invalid).toBeFalsy()
    // No execute: the SDK stops after the call, with no tool results.
    expect(result.toolResults).toEqual([])
    expect(server.requests[0]!.body.tools?.[0]?.function.name).toBe("weather")
  })

  it("exposes lastToolResults on the follow-up request of a multi-step run", async () => {
    const results: unknown[] = []
    const { server, model } = await start(
      sequence(
        { toolCalls: [{ name: "weather", args: { city: "Oslo", days: 1 } }] },
        (req) => {
          results.push(req.lastToolResults)
          return { text: `done: ${req.lastToolResults[0]?.content}` }
        },
      ),
    )
    const result = await generateText({
      model,
      system: "# Role: worker (research)",
      prompt: "go",
      tools: { weather: tool({ ...weather, execute: async ({ city }) => ({ city, temp: 7 }) }) },
      stopWhen: stepCountIs(3),
      maxRetries: 0,
    })
    expect(result.text).toBe('done: {"city":"Oslo","temp":7}')
    expect(results).toEqual([[{ tool_call_id: "call_0_0", toolName: "weather", content: '{"city":"Oslo","temp":7}' }]])
    expect(server.requests.map((r) => [r.role, r.roleDetail])).toEqual([
      ["worker", "research"],
      ["worker", "research"],
    ])
  })

  it("malformed JSON arguments surface as an invalid tool call with tool-error content", async () => {
    const { server, model } = await start(
      sequence({ toolCalls: [{ name: "weather", args: '{"city": "Oslo", days: ', id: "call_bad" }] }),
    )
    const result = await generateText({
      model,
      system: "# Role: planner",
      prompt: "weather?",
      tools: { weather },
      maxRetries: 0,
    })
    expect(server.requests).toHaveLength(1)
    expect(result.finishReason).toBe("tool-calls")

    // The invalid call is still reported in toolCalls, flagged invalid, with the raw string as input.
    expect(result.toolCalls).toHaveLength(1)
    const call = result.toolCalls[0]!
    expect(call).toMatchObject({ toolCallId: "call_bad", toolName: "weather", invalid: true })
    expect(call.input).toBe('{"city": "Oslo", days: ')

    // ...and the SDK itself adds a tool-error part (no execute needed) that goes into the
    // response messages as a tool message, so the next step would tell the model what failed.
    const toolError = result.content.find((p) => p.type === "tool-error")
    expect(toolError).toMatchObject({ type: "tool-error", toolCallId: "call_bad", toolName: "weather" })
    expect(String((toolError as { error: unknown }).error)).toMatch(/JSON|parse/i)
    expect(toolError).toMatchObject({ input: '{"city": "Oslo", days: ', dynamic: true })
    // In response.messages the unparseable input is replaced by {} and the error becomes an
    // error-text tool result.
    expect(result.response.messages).toEqual([
      {
        role: "assistant",
        content: [{ type: "tool-call", toolCallId: "call_bad", toolName: "weather", input: {} }],
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "call_bad",
            toolName: "weather",
            output: { type: "error-text", value: expect.stringMatching(/^Invalid input for tool weather: JSON parsing failed/) },
          },
        ],
      },
    ])
  })

  it("an invalid tool call keeps a multi-step run going even without execute", async () => {
    const followUps: unknown[] = []
    const { server, model } = await start(
      sequence({ toolCalls: [{ name: "weather", args: "{bad", id: "call_bad" }] }, (req) => {
        followUps.push({ assistant: req.messages.at(-2), results: req.lastToolResults })
        return { text: "recovered" }
      }),
    )
    const result = await generateText({
      model,
      prompt: "weather?",
      tools: { weather },
      stopWhen: stepCountIs(3),
      maxRetries: 0,
    })
    expect(result.text).toBe("recovered")
    expect(result.steps).toHaveLength(2)
    expect(server.requests).toHaveLength(2)
    expect(followUps).toEqual([
      {
        // The malformed arguments are NOT echoed back: the SDK sends "{}".
        assistant: {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "call_bad", type: "function", function: { name: "weather", arguments: "{}" } }],
        },
        results: [
          {
            tool_call_id: "call_bad",
            toolName: "weather",
            content: expect.stringMatching(/^Invalid input for tool weather: JSON parsing failed/),
          },
        ],
      },
    ])
  })

  it("retries a 429 honouring retry-after-ms, then succeeds", async () => {
    const { server, model } = await start(
      sequence({ error: { status: 429, message: "slow down", retryAfterMs: 10 } }, { text: "ok after retry" }),
    )
    const started = Date.now()
    const result = await generateText({ model, prompt: "hi", maxRetries: 2 })
    expect(result.text).toBe("ok after retry")
    expect(server.requests).toHaveLength(2)
    // The default backoff would be 2s; retry-after-ms=10 makes it near-immediate.
    expect(Date.now() - started).toBeLessThan(1_500)
  })

  it("a 500 on every attempt rejects after the retries with a RetryError", async () => {
    const { server, model } = await start(() => ({ error: { status: 500, message: "boom", retryAfterMs: 1 } }))
    const err = await generateText({ model, prompt: "hi", maxRetries: 2 }).catch((e: unknown) => e)
    expect(RetryError.isInstance(err)).toBe(true)
    const retry = err as RetryError
    expect(retry.reason).toBe("maxRetriesExceeded")
    expect(retry.errors).toHaveLength(3)
    expect(APICallError.isInstance(retry.lastError)).toBe(true)
    expect((retry.lastError as APICallError).statusCode).toBe(500)
    expect((retry.lastError as APICallError).message).toBe("boom")
    expect(server.requests).toHaveLength(3)
  })

  it("a non-retryable 400 rejects with the APICallError itself", async () => {
    const { server, model } = await start(() => ({ error: { status: 400, message: "bad input" } }))
    const err = await generateText({ model, prompt: "hi", maxRetries: 2 }).catch((e: unknown) => e)
    expect(APICallError.isInstance(err)).toBe(true)
    expect((err as APICallError).message).toBe("bad input")
    expect((err as APICallError).isRetryable).toBe(false)
    expect(server.requests).toHaveLength(1)
  })

  it("a throwing script becomes a 500 whose message reaches the caller", async () => {
    const { server, model } = await start(byRole({ teller: sequence({ text: "x" }) }))
    const err = await generateText({ model, system: "# Role: planner", prompt: "hi", maxRetries: 0 }).catch(
      (e: unknown) => e,
    )
    expect(APICallError.isInstance(err)).toBe(true)
    expect((err as APICallError).statusCode).toBe(500)
    expect((err as APICallError).message).toMatch(/no script for role "planner"/)
    expect(server.scriptErrors).toHaveLength(1)

    // Exhausted sequences fail loudly too.
    const provider = createOpenAICompatible({ name: "fake", baseURL: server.url, apiKey: "x" })
    await generateText({ model: provider("scripted"), system: "# Role: teller", prompt: "1", maxRetries: 0 })
    const err2 = await generateText({
      model: provider("scripted"),
      system: "# Role: teller",
      prompt: "2",
      maxRetries: 0,
    }).catch((e: unknown) => e)
    expect((err2 as Error).message).toMatch(/sequence exhausted/)
  })

  it("byRole routes by the # Role marker, including worker types and compaction", async () => {
    const { model } = await start(
      byRole({
        teller: () => ({ text: "T" }),
        planner: () => ({ text: "P" }),
        worker: (req) => ({ text: `W:${req.roleDetail}` }),
        compaction: () => ({ text: "C" }),
      }),
    )
    const ask = async (system: string) => (await generateText({ model, system, prompt: "x", maxRetries: 0 })).text
    expect(await ask("# Role: teller\nbe nice")).toBe("T")
    expect(await ask("# Role: planner")).toBe("P")
    expect(await ask("# Role: worker (browser)\nfetch pages")).toBe("W:browser")
    expect(await ask("# Role: compaction\nsummarise")).toBe("C")
    const err = await generateText({ model, system: "no marker", prompt: "x", maxRetries: 0 }).catch((e: unknown) => e)
    expect((err as Error).message).toMatch(/no "# Role: <role>" marker/)
  })

  it("streams text", async () => {
    const { server, model } = await start(
      sequence({ text: "A fairly long streamed answer.", usage: { prompt: 12, completion: 6 } }),
    )
    const result = streamText({ model, prompt: "hi", maxRetries: 0 })
    const deltas: string[] = []
    for await (const d of result.textStream) deltas.push(d)
    expect(deltas.length).toBeGreaterThan(1)
    expect(deltas.join("")).toBe("A fairly long streamed answer.")
    expect(await result.text).toBe("A fairly long streamed answer.")
    expect(await result.finishReason).toBe("stop")
    expect((await result.usage).inputTokens).toBe(12)
    expect(server.requests[0]!.stream).toBe(true)
  })

  it("streams a tool call (and text before it)", async () => {
    const { model } = await start(
      sequence({
        text: "Let me check.",
        toolCalls: [
          { name: "weather", args: { city: "Bergen", days: 2 }, id: "call_s1" },
          { name: "weather", args: { city: "Tromsø", days: 5 } },
        ],
      }),
    )
    const result = streamText({ model, prompt: "weather?", tools: { weather }, maxRetries: 0 })
    const parts: string[] = []
    for await (const p of result.fullStream) parts.push(p.type)
    expect(parts).toContain("tool-input-delta")
    expect(await result.text).toBe("Let me check.")
    expect(await result.finishReason).toBe("tool-calls")
    const calls = await result.toolCalls
    expect(calls.map((c) => [c.toolCallId, c.toolName, c.input])).toEqual([
      ["call_s1", "weather", { city: "Bergen", days: 2 }],
      ["call_0_1", "weather", { city: "Tromsø", days: 5 }],
    ])
  })

  it("hang + abortSignal rejects promptly, and close() still works", async () => {
    const { server, model } = await start(() => ({ hang: true }))
    const ac = new AbortController()
    const pending = generateText({ model, prompt: "hi", abortSignal: ac.signal, maxRetries: 0 })
    await server.waitForRequests(1, 2_000)
    const started = Date.now()
    ac.abort()
    const err = await pending.catch((e: unknown) => e)
    expect(err).toBeInstanceOf(Error)
    expect((err as Error).name).toBe("AbortError")
    expect(Date.now() - started).toBeLessThan(1_000)
  })

  it("hang + timeout option rejects, and close() drops a still-hung request", async () => {
    const { server, model } = await start(() => ({ hang: true }))
    const err = await generateText({ model, prompt: "hi", timeout: 200, maxRetries: 0 }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(Error)

    // A request that is still hanging when the server closes: close() resolves and the client errors.
    const pending = generateText({ model, prompt: "again", maxRetries: 0 }).catch((e: unknown) => e)
    await server.waitForRequests(2, 2_000)
    const started = Date.now()
    await server.close()
    expect(Date.now() - started).toBeLessThan(1_000)
    expect(await pending).toBeInstanceOf(Error)
  })

  it("reports scripted usage in result.usage (large context)", async () => {
    const { model } = await start(sequence({ text: "big", usage: { prompt: 180_000, completion: 42 } }))
    const result = await generateText({ model, prompt: "hi", maxRetries: 0 })
    expect(result.usage.inputTokens).toBe(180_000)
    expect(result.usage.outputTokens).toBe(42)
    expect(result.usage.totalTokens).toBe(180_042)
    expect(result.totalUsage.inputTokens).toBe(180_000)
  })

  it("waitForRequests resolves on arrival and rejects after its bound", async () => {
    const { server, model } = await start(() => ({ text: "ok" }))
    const waiting = server.waitForRequests(2, 5_000)
    await generateText({ model, prompt: "1", maxRetries: 0 })
    await generateText({ model, prompt: "2", maxRetries: 0 })
    expect((await waiting).map((r) => r.body.messages.at(-1)?.content)).toEqual(["1", "2"])
    await expect(server.waitForRequests(3, 50)).rejects.toThrow(/timed out after 50ms waiting for 3 requests \(got 2/)
  })

  it("answers GET /v1/models", async () => {
    const { server } = await start(() => ({ text: "" }))
    const res = await fetch(`${server.url}/models`)
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ object: "list", data: [{ id: "scripted" }] })
  })
})
