import { describe, expect, it } from "vitest"
import { z } from "zod"
import { runLoop } from "../../src/agent/loop.ts"
import type { MessageRecord } from "../../src/store/records.ts"
import { AWAIT_ANSWER } from "../../src/tool/capabilities.ts"
import { ToolError, defineTool } from "../../src/tool/tool.ts"
import { sequence, type Script } from "../support/mock-model.ts"
import { SYSTEM, call, echoTool, results, setup, text, user } from "./loop-setup.ts"

describe("runLoop", { timeout: 5_000 }, () => {
  it("ends the run when the model answers with plain text", async () => {
    const { model, log, input } = setup(sequence(text("hello there")), [echoTool()])
    await log.append({ message: user("hi") })
    await expect(runLoop(input)).resolves.toEqual({ status: "done", text: "hello there" })
    expect(model.calls).toHaveLength(1)
    expect(model.calls[0]!.toolNames).toEqual(["echo"])
    expect(model.calls[0]!.system).toBe(SYSTEM)
    expect(log.roles()).toEqual(["user", "assistant"])
    expect(log.records[1]!.usage).toEqual({ input: 10, output: 5 })
  })

  it("runs a tool call, appends its result, and the next step sees it", async () => {
    const executed: Array<{ text: string; callId: string }> = []
    const { model, log, input } = setup(sequence(call("echo", { text: "ping" }, "c1"), text("got it")), [echoTool(executed)])
    await log.append({ message: user("hi") })
    await expect(runLoop(input)).resolves.toEqual({ status: "done", text: "got it" })
    expect(executed).toEqual([{ text: "ping", callId: "c1" }])
    expect(log.roles()).toEqual(["user", "assistant", "tool", "assistant"])
    expect(results(log)).toEqual([{ type: "tool-result", toolCallId: "c1", toolName: "echo", output: { type: "json", value: { echoed: "ping" } } }])
    expect(model.calls[1]!.lastToolResults).toEqual([{ toolCallId: "c1", toolName: "echo", output: '{"echoed":"ping"}', isError: false }])
  })

  it("writes the assistant message to the log before the tool executes", async () => {
    let seen: MessageRecord | undefined
    let seenCallId = ""
    const probe = defineTool({
      id: "probe",
      description: "Looks at the log.",
      parameters: z.object({}),
      execute: async (_args, ctx) => {
        seen = log.records.at(-1)
        seenCallId = ctx.callId
        return "ok"
      },
    })
    const { log, input } = setup(sequence(call("probe", {}, "p1"), text("done")), [probe])
    await log.append({ message: user("hi") })
    await runLoop(input)
    expect(seenCallId).toBe("p1")
    expect(seen?.message.role).toBe("assistant")
    expect(seen?.message.content).toEqual([expect.objectContaining({ type: "tool-call", toolCallId: "p1", toolName: "probe" })])
  })

  it("refuses the third identical consecutive tool call (doom loop)", async () => {
    const executed: Array<{ text: string; callId: string }> = []
    const same = call("echo", { text: "again" })
    const { model, log, input } = setup(sequence(same, same, same, text("giving up")), [echoTool(executed)])
    await log.append({ message: user("hi") })
    await expect(runLoop(input)).resolves.toEqual({ status: "done", text: "giving up" })
    expect(executed).toHaveLength(2)
    const outputs = results(log).map((r) => r.output)
    expect(outputs.slice(0, 2).every((o) => o.type === "json")).toBe(true)
    expect(outputs[2]!.type).toBe("error-text")
    expect(model.calls[3]!.lastToolResults[0]!.output).toMatch(/Refused: this is the 3rd call in a row of echo/)
  })

  it("resets the doom-loop count when a different input comes in between", async () => {
    const executed: Array<{ text: string; callId: string }> = []
    const a = call("echo", { text: "a" })
    const b = call("echo", { text: "b" })
    const { log, input } = setup(sequence(a, a, b, a, a, a, text("end")), [echoTool(executed)])
    await log.append({ message: user("hi") })
    await runLoop(input)
    // a a b a a run; the sixth (third a in a row) is refused.
    expect(executed.map((e) => e.text)).toEqual(["a", "a", "b", "a", "a"])
    expect(results(log).map((r) => r.output.type)).toEqual(["json", "json", "json", "json", "json", "error-text"])
  })

  it("does not count identical calls of an earlier user turn towards the doom loop", async () => {
    const executed: Array<{ text: string; callId: string }> = []
    const same = call("echo", { text: "status" })
    const { log, input } = setup(sequence(same, same, text("first"), same, text("second")), [echoTool(executed)])
    await log.append({ message: user("check the status") })
    await expect(runLoop(input)).resolves.toEqual({ status: "done", text: "first" })
    await log.append({ message: user("check it again") })
    await expect(runLoop(input)).resolves.toEqual({ status: "done", text: "second" })
    expect(executed).toHaveLength(3)
    expect(results(log).every((r) => r.output.type === "json")).toBe(true)
  })

  it("answers a tool call with malformed JSON with a tool error and continues", async () => {
    const executed: Array<{ text: string; callId: string }> = []
    const { model, log, input } = setup(sequence(call("echo", '{"text": "unterminated', "bad"), text("fixed it")), [echoTool(executed)])
    await log.append({ message: user("hi") })
    await expect(runLoop(input)).resolves.toEqual({ status: "done", text: "fixed it" })
    expect(executed).toEqual([])
    expect(model.calls).toHaveLength(2)
    expect(model.calls[1]!.lastToolResults).toEqual([expect.objectContaining({ toolCallId: "bad", isError: true })])
    // The model is told its JSON was malformed, not merely that an argument is missing.
    expect(model.calls[1]!.lastToolResults[0]!.output).toMatch(/JSON/)
    expect(results(log)).toHaveLength(1)
  })

  it("answers schema-invalid arguments with a tool error and continues", async () => {
    const executed: Array<{ text: string; callId: string }> = []
    const { model, input, log } = setup(sequence(call("echo", { text: 42 }, "bad"), call("echo", { text: "ok" }, "good"), text("fine")), [echoTool(executed)])
    await log.append({ message: user("hi") })
    await expect(runLoop(input)).resolves.toEqual({ status: "done", text: "fine" })
    expect(executed.map((e) => e.callId)).toEqual(["good"])
    expect(model.calls[1]!.lastToolResults).toEqual([expect.objectContaining({ toolCallId: "bad", isError: true })])
    expect(model.calls[1]!.lastToolResults[0]!.output).toMatch(/echo/)
  })

  it("answers a call to an unknown tool with a tool error and continues", async () => {
    const { model, input, log } = setup(sequence(call("no_such_tool", {}, "u1"), text("sorry")), [echoTool()])
    await log.append({ message: user("hi") })
    await expect(runLoop(input)).resolves.toEqual({ status: "done", text: "sorry" })
    expect(model.calls[1]!.lastToolResults).toEqual([expect.objectContaining({ toolCallId: "u1", isError: true })])
    expect(model.calls[1]!.lastToolResults[0]!.output).toMatch(/no_such_tool.*Available tools: echo/)
  })

  it("passes a ToolError's message verbatim; a plain Error's text goes to the log, the model gets its reference", async () => {
    const internals = "upstream llm-gw-07.corp.internal:8443 failed: db password rejected"
    const failing = defineTool({
      id: "fail",
      description: "Fails.",
      parameters: z.object({ kind: z.enum(["tool", "plain"]) }),
      execute: async ({ kind }) => {
        if (kind === "tool") throw new ToolError("File not found: notes.txt")
        throw new Error(internals)
      },
    })
    const logged: Array<{ fields: Record<string, unknown>; what: string }> = []
    const { model, input, log } = setup(sequence(call("fail", { kind: "tool" }), call("fail", { kind: "plain" }), text("ok")), [failing])
    input.context = { ...input.context, incidents: { error: (fields: Record<string, unknown>, what: string) => void logged.push({ fields, what }) } as never }
    await log.append({ message: user("hi") })
    await runLoop(input)
    const first = model.calls[1]!.lastToolResults[0]!
    const second = model.calls[2]!.lastToolResults[0]!
    expect(first).toMatchObject({ isError: true, output: "File not found: notes.txt" })
    expect(second.isError).toBe(true)
    expect(second.output).toMatch(/^Tool fail failed: an internal error \(reference ref-[0-9a-f]{8}\)$/)
    expect(JSON.stringify(model.calls.map((c) => c.prompt))).not.toContain("llm-gw-07")
    expect(logged).toEqual([{ what: "a tool failed", fields: expect.objectContaining({ tool: "fail", ref: /reference (ref-\w+)/.exec(String(second.output))![1], err: expect.objectContaining({ message: internals }) }) }])
  })

  it("on the last allowed step asks for a text answer and offers no tools", async () => {
    const executed: Array<{ text: string; callId: string }> = []
    const script: Script = (c) => {
      if (c.index >= 8) throw new Error("runaway: tools offered on every step")
      return c.toolNames.length > 0 ? call("echo", { text: `step ${c.index}` }) : text("summary of what was done")
    }
    const { model, input, log } = setup(script, [echoTool(executed)], { maxSteps: 3 })
    await log.append({ message: user("hi") })
    await expect(runLoop(input)).resolves.toEqual({ status: "done", text: "summary of what was done" })
    expect(model.calls.map((c) => c.toolNames)).toEqual([["echo"], ["echo"], []])
    expect(model.calls[2]!.lastUserText).toMatch(/used all the steps/)
    expect(executed).toHaveLength(2)
  })

  it("ends the run after the last step even when the model still calls a tool", async () => {
    // The last step offers no tools, but a model may call one anyway (one named in the history).
    // The step budget is a hard bound: no further step. The script gives up after 8 calls so a
    // regression fails instead of spinning.
    const script: Script = (c) => {
      if (c.index >= 8) throw new Error(`runaway: model called ${c.index + 1} times with maxSteps 3`)
      return call("echo", { text: `step ${c.index}` })
    }
    const { model, input, log } = setup(script, [echoTool()], { maxSteps: 3 })
    await log.append({ message: user("hi") })
    const outcome = await runLoop(input).catch((error: Error) => ({ status: "error", error: error.message }))
    expect(model.calls).toHaveLength(3)
    expect(outcome).toMatchObject({ status: "done" })
  })

  it("injects input plainly before the first step and wrapped in <system-reminder> later", async () => {
    const queue = [[{ eventId: "e1", text: "please echo", fromUser: true }], [], [{ eventId: "e2", text: "also say bye", fromUser: true }]]
    let taken = 0
    const takeInput = () => {
      taken++
      return queue.shift() ?? []
    }
    const { model, input, log } = setup(sequence(call("echo", { text: "x" }), call("echo", { text: "y" }), text("bye")), [echoTool()], { takeInput })
    await expect(runLoop(input)).resolves.toEqual({ status: "done", text: "bye" })
    // Once before every step, and once more before the final answer ends the run.
    expect(taken).toBe(4)
    expect(model.calls[0]!.lastUserText).toBe("please echo")
    expect(log.records[0]).toMatchObject({ eventId: "e1", message: { role: "user", content: "please echo" } })
    const later = model.calls[2]!.lastUserText
    expect(later.startsWith("<system-reminder>")).toBe(true)
    expect(later.trimEnd().endsWith("</system-reminder>")).toBe(true)
    expect(later).toContain("also say bye")
    const injected = log.records.find((r) => r.eventId === "e2")!
    expect(log.records.indexOf(injected)).toBe(log.records.length - 2)
    expect(log.records[log.records.indexOf(injected) - 1]!.message.role).toBe("tool")
  })

  it("handles input that arrives with the final answer in the same run", async () => {
    const queue = [[], [], [{ eventId: "late", text: "one more thing", fromUser: true }]]
    const { model, input } = setup(sequence(call("echo", { text: "x" }), text("first answer"), text("second answer")), [echoTool()], {
      takeInput: () => queue.shift() ?? [],
    })
    await input.log.append({ message: user("hi") })
    await expect(runLoop(input)).resolves.toEqual({ status: "done", text: "second answer" })
    expect(model.calls).toHaveLength(3)
    expect(model.calls[2]!.lastUserText).toContain("one more thing")
    expect(model.calls[2]!.lastUserText.startsWith("<system-reminder>")).toBe(true)
  })

  it("stops at a tool that awaits an answer and, resumed, runs that call again to get it", async () => {
    const executed: Array<{ text: string; callId: string }> = []
    let answer: string | undefined
    const askUser = defineTool({
      id: "ask_user",
      description: "Asks the user.",
      parameters: z.object({ question: z.string() }),
      execute: async () => answer ?? AWAIT_ANSWER,
    })
    const script = sequence(
      { toolCalls: [{ name: "echo", args: { text: "before" }, id: "e1" }, { name: "ask_user", args: { question: "Which colour?" }, id: "q1" }, { name: "echo", args: { text: "after" }, id: "e2" }] },
      (c) => {
        expect(c.lastToolResults.map((r) => r.toolCallId).sort()).toEqual(["e1", "e2", "q1"])
        return text(`user chose ${JSON.stringify(c.lastToolResults.find((r) => r.toolCallId === "q1")!.output)}`)
      },
    )
    const { model, input, log } = setup(script, [echoTool(executed), askUser])
    await log.append({ message: user("paint it") })
    const first = await runLoop(input)
    expect(first).toMatchObject({ status: "waiting", call: { toolCallId: "q1", toolName: "ask_user", input: { question: "Which colour?" } } })
    expect(model.calls).toHaveLength(1)
    expect(executed.map((e) => e.callId)).toEqual(["e1"])
    // Still no answer: resuming stops at the same call again, without a model call.
    await expect(runLoop(input)).resolves.toMatchObject({ status: "waiting" })
    expect(model.calls).toHaveLength(1)

    answer = "blue"
    let callsWhenE2Ran = -1
    input.tools = [echoTool(executed, () => (callsWhenE2Ran = model.calls.length)), askUser]
    await expect(runLoop(input)).resolves.toEqual({ status: "done", text: 'user chose "blue"' })
    expect(executed.map((e) => e.callId)).toEqual(["e1", "e2"])
    expect(callsWhenE2Ran).toBe(1)
    expect(model.calls).toHaveLength(2)
  })

  it("tells a tool its call is fresh only when this run's step made it; a call resumed from the log may have run before", async () => {
    const seen: Array<[string, boolean | undefined]> = []
    const tool = defineTool({
      id: "echo",
      description: "Echoes.",
      parameters: z.object({ text: z.string() }),
      execute: async (args, ctx) => {
        seen.push([ctx.callId, ctx.fresh])
        return args.text
      },
    })
    const { input, log } = setup(sequence(call("echo", { text: "new" }, "new1"), text("done")), [tool])
    await log.append({ message: user("hi") }, { message: { role: "assistant", content: [{ type: "tool-call", toolCallId: "old1", toolName: "echo", input: { text: "old" } }] } })
    await runLoop(input)
    expect(seen).toEqual([
      ["old1", undefined],
      ["new1", true],
    ])
  })

  it("resumes a log ending in an unanswered tool call by running it first, without a model call", async () => {
    const executed: Array<{ text: string; callId: string }> = []
    let callsAtExecute = -1
    const tool = defineTool({
      id: "echo",
      description: "Echoes.",
      parameters: z.object({ text: z.string() }),
      execute: async (args, ctx) => {
        callsAtExecute = model.calls.length
        executed.push({ text: args.text, callId: ctx.callId })
        return args.text
      },
    })
    const { model, input, log } = setup((c) => text(`resumed with ${c.lastToolResults.map((r) => r.toolCallId).join(",")}`), [tool])
    await log.append(
      { message: user("hi") },
      {
        message: {
          role: "assistant",
          content: [
            { type: "tool-call", toolCallId: "done1", toolName: "echo", input: { text: "already" } },
            { type: "tool-call", toolCallId: "todo1", toolName: "echo", input: { text: "pending" } },
          ],
        },
      },
      { message: { role: "tool", content: [{ type: "tool-result", toolCallId: "done1", toolName: "echo", output: { type: "json", value: "already" } }] } },
    )
    await expect(runLoop(input)).resolves.toEqual({ status: "done", text: "resumed with done1,todo1" })
    expect(executed).toEqual([{ text: "pending", callId: "todo1" }])
    expect(callsAtExecute).toBe(0)
    expect(model.calls).toHaveLength(1)
  })
})
