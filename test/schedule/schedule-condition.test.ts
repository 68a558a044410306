import { describe, expect, it } from "vitest"
import { evaluateCondition, nextTimeOf, whyNever, type ConditionFacts } from "../../src/schedule/condition.ts"
import type { Condition, TaskStatus } from "../../src/core/types.ts"

const now = new Date("2026-01-05T10:00:00Z")
const since = "2026-01-05T09:00:00Z"

function facts(tasks: Record<string, TaskStatus> = {}, raised: Record<string, string> = {}): ConditionFacts {
  return {
    taskStatus: (id) => tasks[id],
    now,
    raisedSince: (name, from) => raised[name] !== undefined && Date.parse(raised[name]) >= Date.parse(from),
  }
}

const task = (status?: "completed" | "failed" | "any"): Condition => ({ kind: "task", taskId: "t", status })

describe("evaluateCondition", () => {
  it.each([
    // wanted, the task's status, result
    [undefined, "running", "waiting"],
    [undefined, "completed", "holds"],
    [undefined, "failed", "never"],
    [undefined, "cancelled", "never"],
    [undefined, "timed_out", "never"],
    ["failed", "queued", "waiting"],
    ["failed", "failed", "holds"],
    ["failed", "timed_out", "holds"],
    ["failed", "completed", "never"],
    ["failed", "cancelled", "never"],
    ["any", "running", "waiting"],
    ["any", "cancelled", "holds"],
    ["any", "completed", "holds"],
  ] as const)("task with status %s: %s → %s", (wanted, status, result) => {
    expect(evaluateCondition(task(wanted), facts({ t: status }), since)).toBe(result)
  })

  it("never holds for an unknown task", () => {
    expect(evaluateCondition(task("any"), facts(), since)).toBe("never")
  })

  it("holds a time from that time on", () => {
    expect(evaluateCondition({ kind: "time", at: "2026-01-05T10:00:01Z" }, facts(), since)).toBe("waiting")
    expect(evaluateCondition({ kind: "time", at: "2026-01-05T11:00:00+01:00" }, facts(), since)).toBe("holds")
  })

  it("holds an event raised at or after since, not before", () => {
    const event: Condition = { kind: "event", name: "deploy" }
    expect(evaluateCondition(event, facts({}, { deploy: "2026-01-05T08:59:59Z" }), since)).toBe("waiting")
    expect(evaluateCondition(event, facts({}, { deploy: since }), since)).toBe("holds")
  })

  it("combines with all: never if any part is never, holds if every part holds", () => {
    const all = (...of: Condition[]): Condition => ({ kind: "all", of })
    const done = facts({ t: "completed" }, { go: since })
    expect(evaluateCondition(all(task(), { kind: "event", name: "go" }), done, since)).toBe("holds")
    expect(evaluateCondition(all(task(), { kind: "event", name: "other" }), done, since)).toBe("waiting")
    expect(evaluateCondition(all(task("failed"), { kind: "event", name: "other" }), done, since)).toBe("never")
  })

  it("combines with any: holds if a part holds, never only if every part is never", () => {
    const any = (...of: Condition[]): Condition => ({ kind: "any", of })
    const cancelled = facts({ t: "cancelled" }, { go: since })
    expect(evaluateCondition(any(task(), { kind: "event", name: "go" }), cancelled, since)).toBe("holds")
    expect(evaluateCondition(any(task(), { kind: "event", name: "other" }), cancelled, since)).toBe("waiting")
    expect(evaluateCondition(any(task(), task("failed")), cancelled, since)).toBe("never")
  })
})

describe("nextTimeOf", () => {
  it("is the earliest time still ahead, anywhere in the condition", () => {
    const condition: Condition = {
      kind: "any",
      of: [
        { kind: "time", at: "2026-01-05T09:00:00Z" }, // passed
        { kind: "all", of: [{ kind: "time", at: "2026-01-05T12:00:00Z" }, { kind: "event", name: "x" }] },
        { kind: "time", at: "2026-01-05T11:00:00+00:30" },
      ],
    }
    expect(nextTimeOf(condition, now)).toEqual(new Date("2026-01-05T10:30:00Z"))
    expect(nextTimeOf({ kind: "event", name: "x" }, now)).toBeUndefined()
    expect(nextTimeOf({ kind: "time", at: "2026-01-05T10:00:00Z" }, now)).toBeUndefined()
  })
})

describe("whyNever", () => {
  it("names every task part that cannot hold, nested included, and nothing else", () => {
    const condition: Condition = {
      kind: "all",
      of: [
        { kind: "task", taskId: "a" },
        { kind: "any", of: [{ kind: "task", taskId: "b", status: "failed" }, { kind: "task", taskId: "gone" }] },
        { kind: "task", taskId: "c" },
        { kind: "event", name: "deploy" },
      ],
    }
    const statuses: Record<string, TaskStatus> = { a: "cancelled", b: "completed", c: "running" }
    expect(whyNever(condition, (id) => statuses[id])).toBe("task a ended cancelled, not completed; task b ended completed, not failed; task gone does not exist")
  })
})
