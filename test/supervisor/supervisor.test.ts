import { afterEach, describe, expect, it } from "vitest"
import { byRole, contentText, sequence } from "../fakes/model-server.ts"
import { startHarness, type Harness } from "../support/harness.ts"
import { afterTool, say } from "../support/scripts.ts"
import { deferred, delegatingTeller, done, echoTeller } from "./scripted-agents.ts"

let harness: Harness | undefined
afterEach(async () => {
  await harness?.close()
  harness = undefined
})

describe("Supervisor", () => {
  it("answers a Teller-only turn once, through the reply tool", async () => {
    harness = await startHarness(byRole({ teller: echoTeller }))
    await harness.channel.say("hello")
    const sent = await harness.channel.waitForSent(1)
    expect(sent[0]!.text).toBe("you said: hello")
    await harness.app.supervisor.idle()
    expect(harness.channel.sent).toHaveLength(1)
  })

  it("does not count the same reply in three different turns as a doom loop", async () => {
    harness = await startHarness(byRole({ teller: echoTeller }))
    for (let i = 1; i <= 3; i++) {
      await harness.channel.say("hi")
      await harness.channel.waitForSent(i)
      await harness.app.supervisor.idle()
    }
    expect(harness.channel.sent.map((m) => m.text)).toEqual(["you said: hi", "you said: hi", "you said: hi"])
  })

  it("delivers a turn's final text when the Teller did not call reply", async () => {
    harness = await startHarness(byRole({ teller: () => ({ text: "plain answer" }) }))
    await harness.channel.say("hi")
    expect((await harness.channel.waitForSent(1))[0]!.text).toBe("plain answer")
    await harness.app.supervisor.idle()
    expect(harness.channel.sent).toHaveLength(1)
  })

  it("never lets a stranger's message reach a model or the store", async () => {
    harness = await startHarness(byRole({ teller: echoTeller }))
    await harness.channel.say("let me in", "test:c9", "test:u9")
    await harness.app.supervisor.idle()
    expect(harness.server.requests).toHaveLength(0)
    expect(await harness.app.store.history.recent("test:c9", 10, 0)).toEqual([])
  })

  it("runs a full delegate round trip and wakes the Teller once with every result", async () => {
    harness = await startHarness(
      byRole({
        teller: delegatingTeller,
        planner: (req) =>
          !afterTool(req)
            ? { toolCalls: [{ name: "delegate", args: { prompt: "part A" } }, { name: "delegate", args: { prompt: "part B", priority: 9 } }] }
            : { text: "dispatched two workers" },
        worker: (req) => ({ text: `done with ${req.lastUserText}` }),
      }),
    )
    await harness.channel.say("do the thing")
    const sent = await harness.channel.waitForSent(2)
    await harness.app.supervisor.idle()
    expect(sent.map((m) => m.text)).toEqual(["you said: do the thing", 'results: status="completed" status="completed" status="completed"'])
    const report = harness.server.requests.find((r) => r.role === "teller" && contentText(r.body.messages.at(-1)!.content).startsWith("<task-results>"))!
    const text = contentText(report.body.messages.at(-1)!.content)
    expect(text).toContain("done with part A")
    expect(text).toContain("done with part B")
    expect(text).toContain("session_id:")
    expect(harness.channel.sent).toHaveLength(2)
  })

  it("takes one conversation's messages in order and injects one that arrives mid-turn", async () => {
    const release = deferred()
    let tellerCalls = 0
    harness = await startHarness(
      byRole({
        teller: async (req) => {
          tellerCalls++
          if (tellerCalls === 1) {
            await release.promise
            return { toolCalls: [{ name: "list_tasks", args: {} }] }
          }
          if (req.lastToolResults.some((r) => r.toolName === "reply")) return done
          return say(`seen: ${req.messages.filter((m) => m.role === "user").map((m) => JSON.stringify(m.content)).join(" | ")}`)
        },
      }),
    )
    await harness.channel.say("first")
    await harness.server.waitForRequests(1)
    await harness.channel.say("second")
    release.resolve()
    const [reply] = await harness.channel.waitForSent(1)
    expect(reply!.text).toMatch(/first.*<system-reminder>.*second/)
    await harness.app.supervisor.idle()
    expect(harness.channel.sent).toHaveLength(1)
  })

  it("runs different conversations concurrently", async () => {
    const release = deferred()
    harness = await startHarness(
      byRole({
        teller: async (req) => {
          if (afterTool(req)) return done
          if (req.lastUserText === "slow") await release.promise
          return say(req.lastUserText)
        },
      }),
    )
    await harness.channel.say("slow", "test:c1")
    await harness.server.waitForRequests(1)
    await harness.channel.say("fast", "test:c2", "test:u2")
    expect((await harness.channel.waitForSent(1))[0]!.text).toBe("fast")
    release.resolve()
    await harness.channel.waitForSent(2)
  })

  it("gives a malformed tool call's error to the model and carries on", async () => {
    harness = await startHarness(
      byRole({
        teller: sequence({ toolCalls: [{ name: "reply", args: '{"text": "unterminated' }] }, (req) => say(`recovered after: ${req.lastToolResults[0]?.content.slice(0, 40)}`), done),
      }),
    )
    await harness.channel.say("hi")
    const sent = await harness.channel.waitForSent(1)
    expect(sent[0]!.text).toMatch(/^recovered after: Invalid input for tool reply/)
    await harness.app.supervisor.idle()
    expect(harness.channel.sent).toHaveLength(1)
  })

  it("refuses planner-only delegate fields from the Teller with an error the model sees", async () => {
    harness = await startHarness(
      byRole({
        teller: sequence({ toolCalls: [{ name: "delegate", args: { prompt: "x", priority: 9 } }] }, (req) => say(req.lastToolResults[0]!.content), done),
      }),
    )
    await harness.channel.say("hi")
    expect((await harness.channel.waitForSent(1))[0]!.text).toContain("Only the Planner may set priority")
    expect(await harness.app.store.tasks()).toEqual([])
  })

  it("retries a failed send with backoff and delivers it exactly once", async () => {
    harness = await startHarness(byRole({ teller: echoTeller }))
    harness.channel.failures = 1
    await harness.channel.say("hello")
    await harness.channel.waitForSent(1)
    await harness.app.supervisor.idle()
    expect(harness.channel.sent.map((m) => m.text)).toEqual(["you said: hello"])
    const [record] = await harness.app.store.outbox.all()
    expect(record).toMatchObject({ status: "delivered", attempts: 2, messageId: "m1" })
  })

  it("tells each channel at start which of its conversations Steward already takes part in", async () => {
    harness = await startHarness(byRole({ teller: echoTeller }))
    await harness.channel.say("hello", "test:c1")
    await harness.channel.say("hello", "test:T1:C1:1700000000.000100", "test:u2")
    await harness.channel.waitForSent(2)
    await harness.restart({ graceful: true })
    expect(harness.channel.conversations.sort()).toEqual(["test:T1:C1:1700000000.000100", "test:c1"])
  })

  it("acts for the author of the message in a conversation several people write in", async () => {
    harness = await startHarness(
      byRole({ teller: (req) => (afterTool(req) ? done : req.lastUserText.startsWith("remember") ? { toolCalls: [{ name: "remember", args: { content: req.lastUserText } }] } : say("hi")) }),
    )
    await harness.channel.say("hello", "test:thread", "test:u1")
    await harness.channel.waitForSent(1)
    await harness.app.supervisor.idle()
    await harness.channel.say("remember my seat is 12C", "test:thread", "test:u2")
    await harness.app.supervisor.idle()
    expect(harness.memory.notes).toEqual([{ user: "test:u2", content: "remember my seat is 12C" }])
  })

  it("compacts a Teller session that outgrew its context and writes the summary to the user's memory", async () => {
    harness = await startHarness(
      byRole({
        teller: (req) => {
          if (!afterTool(req) && !req.lastUserText.startsWith("Continue")) return { toolCalls: [{ name: "list_tasks", args: {} }], usage: { prompt: 5000, completion: 10 } }
          if (req.messages.some((m) => m.role === "assistant" && contentText(m.content).startsWith("SUMMARY"))) return afterTool(req) ? done : say("after compaction")
          return done
        },
        compaction: () => ({ text: "SUMMARY: the user asked for their tasks" }),
      }),
      { MODEL_CONTEXT_TOKENS: "1000", MODEL_OUTPUT_TOKENS: "256" },
    )
    await harness.channel.say("what is running?")
    expect((await harness.channel.waitForSent(1))[0]!.text).toBe("after compaction")
    expect(harness.memory.compactions).toEqual([{ user: "test:u1", summary: "SUMMARY: the user asked for their tasks" }])
  })
})
