import { describe, expect, it } from "vitest"
import { EVERYONE, WITHHELD, compactionViewer, seenBy } from "../../src/agent/author-view.ts"
import { toModelMessages } from "../../src/agent/context.ts"
import type { MessageRecord } from "../../src/store/records.ts"

let n = 0
const record = (author: string | undefined, message: MessageRecord["message"], extra: Partial<MessageRecord> = {}): MessageRecord => ({
  id: `r${n++}`,
  sessionId: "s",
  createdAt: "2026-01-01T00:00:00Z",
  message,
  ...(author && { author }),
  ...extra,
})

/** A's turn: A asks, the Teller searches A's notes, replies; A's task results come in. */
const aTurn = [
  record("A", { role: "user", content: "what is my pin?" }, { fromUser: true, eventId: "e1" }),
  record("A", { role: "assistant", content: [{ type: "reasoning", text: "A's pin is 4711" }, { type: "tool-call", toolCallId: "c1", toolName: "search_memory", input: { query: "pin" } }] }),
  record("A", { role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "search_memory", output: { type: "text", value: "pin 4711" } }] }),
  record("A", { role: "assistant", content: [{ type: "tool-call", toolCallId: "c2", toolName: "reply", input: { text: "I found it." } }] }),
  record("A", { role: "tool", content: [{ type: "tool-result", toolCallId: "c2", toolName: "reply", output: { type: "json", value: null } }] }),
  record("A", { role: "user", content: "<task-results>secret report</task-results>" }, { eventId: "e2" }),
  record("A", { role: "assistant", content: "Your report is in." }),
]

describe("seenBy", () => {
  it("shows another person's turn only what the chat showed", () => {
    const bTurn = record("B", { role: "user", content: "and mine?" }, { fromUser: true })
    const sent = JSON.stringify(toModelMessages([...aTurn, bTurn], undefined, "B"))
    expect(sent).not.toContain("4711")
    expect(sent).not.toContain("secret report")
    expect(toModelMessages([...aTurn, bTurn], undefined, "B")).toEqual([
      { role: "user", content: "what is my pin?" },
      { role: "assistant", content: [{ type: "text", text: "I found it." }] },
      { role: "user", content: WITHHELD },
      { role: "assistant", content: [{ type: "text", text: "Your report is in." }] },
      { role: "user", content: "and mine?" },
    ])
    // The author's own view is the session as written, the same objects step after step.
    expect(seenBy(aTurn, "A")).toBe(aTurn)
    expect(seenBy([...aTurn, bTurn], "B")[0]).toBe(seenBy([...aTurn, bTurn], "B")[0])
  })

  it("summarises a session several people share from nobody's own view", () => {
    expect(compactionViewer(aTurn, "A")).toBe("A")
    expect(compactionViewer([...aTurn, record("B", { role: "user", content: "hi" }, { fromUser: true })], "A")).toBe(EVERYONE)
    expect(JSON.stringify(seenBy(aTurn, EVERYONE))).not.toContain("4711")
  })
})
