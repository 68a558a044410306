import type { ModelMessage } from "ai"
import { describe, expect, it } from "vitest"
import { CLEARED, REPORTED, pruneLimits, toModelMessages, type PruneLimits } from "../../src/agent/context.ts"
import type { MessageRecord } from "../../src/store/records.ts"

let n = 0
const rec = (message: ModelMessage): MessageRecord => ({ id: `r${++n}`, sessionId: "s1", createdAt: new Date(0).toISOString(), message })
const user = (text: string) => rec({ role: "user", content: text })
const call = (id: string) => rec({ role: "assistant", content: [{ type: "tool-call", toolCallId: id, toolName: "read", input: {} }] })
const result = (id: string, tokens: number) => rec({ role: "tool", content: [{ type: "tool-result", toolCallId: id, toolName: "read", output: { type: "text", value: "x".repeat(tokens * 4) } }] })
const answer = (text: string) => rec({ role: "assistant", content: text })
const report = (id: string, tokens: number) =>
  user(
    [`<task-results>`, `<task id="${id}" agent="default" status="completed">`, `Prompt: p`, "r".repeat(tokens * 4), "<task_metadata>", `session_id: S-${id}`, "</task_metadata>", "</task>", "</task-results>"].join("\n"),
  )

/** How many times a turn changed a message an earlier request had already sent. */
function rewrites(turns: MessageRecord[][], limits: PruneLimits): number {
  const records: MessageRecord[] = []
  let previous: string[] = []
  let count = 0
  for (const turn of turns) {
    records.push(...turn)
    const sent = toModelMessages(records, limits).map((m) => JSON.stringify(m))
    if (previous.some((message, i) => sent[i] !== message)) count++
    previous = sent
  }
  return count
}

describe("pruning that keeps the prefix stable", () => {
  const limits: PruneLimits = { protect: 1_000, minimum: 2_000, turns: 2 }
  const turns = Array.from({ length: 60 }, (_, i) => [user(`q${i}`), call(`c${i}`), result(`c${i}`, 300), answer(`a${i}`)])

  it("clears old output in batches, so earlier messages change once per batch, not every turn", () => {
    // 60 × 300 tokens of output; batches of more than 2,000: at most one rewrite per 7 turns.
    const count = rewrites(turns, limits)
    expect(count).toBeGreaterThan(0)
    expect(count).toBeLessThanOrEqual(Math.ceil((60 * 300) / 2_000))
    const last = toModelMessages(turns.flat(), limits)
    const cleared = last.filter((m) => m.role === "tool" && JSON.stringify(m).includes(CLEARED)).length
    expect(cleared).toBeGreaterThan(40)
  })

  it("comes out the same whether the session is read at once or step by step", () => {
    const all = turns.flat()
    const stepwise = all.map((_, i) => toModelMessages(all.slice(0, i + 1), limits)).at(-1)
    // Copies: passes already made are remembered per session's first record.
    const atOnce = toModelMessages(all.map((record) => ({ ...record })), limits)
    expect(JSON.stringify(atOnce)).toBe(JSON.stringify(stepwise))
  })

  it("scales OpenCode's limits to the context budget", () => {
    expect(pruneLimits(32_000)).toEqual({ protect: 4_000, minimum: 8_000, turns: 2 })
  })
})

describe("task results once reported", () => {
  const limits: PruneLimits = { protect: 100, minimum: 500, turns: 2 }

  it("are kept while the Teller answers them, and cleared down to their task and session ids after", () => {
    const session = [user("go"), answer("On it."), user("and quickly"), report("t1", 1_000)]
    expect(JSON.stringify(toModelMessages(session, limits))).toContain("r".repeat(1_000))
    const later = toModelMessages([...session, answer("Here is what I found."), user("thanks")], limits)
    const stub = later[3]!.content as string
    expect(stub).toBe([`<task-results>`, REPORTED, `<task id="t1" agent="default" status="completed">`, "<task_metadata>\nsession_id: S-t1\n</task_metadata>", "</task-results>"].join("\n"))
  })

  it("stay while they are small enough to keep", () => {
    const session = [user("go"), report("t1", 50), answer("Done."), user("thanks"), answer("ok"), user("bye")]
    expect(JSON.stringify(toModelMessages(session, limits))).toContain("r".repeat(200))
  })
})
