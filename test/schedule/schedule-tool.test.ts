import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import type { ScheduleRequest } from "../../src/schedule/request.ts"
import { scheduleTool } from "../../src/tool/schedule.ts"
import type { Capabilities } from "../../src/tool/capabilities.ts"
import type { ToolContext } from "../../src/tool/tool.ts"
import type { Role } from "../../src/core/types.ts"

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["Date"] })
  vi.setSystemTime(new Date("2026-01-05T10:00:00Z"))
})
afterEach(() => vi.useRealTimers())

/** The error text the model would read, or undefined when the input is valid. */
function problem(input: Record<string, unknown>): string | undefined {
  const parsed = scheduleTool.parameters.safeParse({ prompt: "check the build", ...input })
  return parsed.success ? undefined : parsed.error.message
}

describe("schedule parameters", () => {
  it("takes the seed's three types and the cron extension", () => {
    expect(problem({ type: "recurring", interval: 60 })).toBeUndefined()
    expect(problem({ type: "recurring", cron: "0 9 * * 1-5", timezone: "Europe/Berlin", onMissed: "skip", maxLateness: 600, target: "slack:T1:C1" })).toBeUndefined()
    expect(problem({ type: "recurring", cron: "30 0 9 * * *" })).toBeUndefined()
    expect(problem({ type: "scheduled", runAt: "2026-01-06T09:00:00+01:00", timeout: null })).toBeUndefined()
    expect(problem({ type: "conditional", condition: { kind: "event", name: "deploy" }, cooldown: 300, timeout: 600 })).toBeUndefined()
  })

  it.each([
    [{ type: "recurring", interval: 59 }, ">=60"],
    [{ type: "recurring" }, "exactly one of interval (seconds) or cron"],
    [{ type: "recurring", interval: 600, cron: "0 9 * * *" }, "exactly one of interval (seconds) or cron"],
    [{ type: "recurring", cron: "0 9 * *" }, "not a valid cron expression: expected 5 or 6 fields but got 4"],
    [{ type: "recurring", cron: "61 9 * * *" }, "not a valid cron expression: Invalid value for minute: 61"],
    [{ type: "recurring", cron: "* * * * * *" }, "runs more than once a minute"],
    [{ type: "recurring", cron: "0 0 0 1 1 * 2030" }, "expected 5 or 6 fields but got 7"],
    [{ type: "recurring", cron: "2030-01-01T09:00:00" }, "expected 5 or 6 fields but got 1"],
    [{ type: "recurring", cron: "@reboot" }, 'unknown nickname \\"@reboot\\"'],
    [{ type: "recurring", cron: "0 0 31 2 *" }, "never matches a date"],
    [{ type: "recurring", cron: "5/5 * * * *" }, "stepping with numeric prefix"],
    [{ type: "recurring", cron: "0 9 * * *", timezone: "Europe/Berlim" }, 'unknown IANA time zone \\"Europe/Berlim\\"'],
    [{ type: "recurring", interval: 600, timezone: "Europe/Berlin" }, "timezone is only used with cron"],
    [{ type: "scheduled" }, "scheduled needs runAt"],
    [{ type: "scheduled", runAt: "2026-01-06T09:00:00" }, "Invalid ISO datetime"],
    [{ type: "scheduled", runAt: "2026-01-06T09:00:00Z", interval: 600 }, 'interval is only for type \\"recurring\\"'],
    [{ type: "conditional" }, "conditional needs a condition"],
    [{ type: "conditional", condition: { kind: "event", name: "a b" } }, "letters, digits"],
    [{ type: "recurring", interval: 600, cooldown: 60 }, 'cooldown is only for type \\"conditional\\"'],
    [{ type: "recurring", interval: 600, maxLateness: 90_000 }, "<=86400"],
  ])("rejects %j with a clear message", (input, message) => {
    expect(problem(input)).toContain(message)
  })
})

describe("schedule tool", () => {
  function context(role: Role, capabilities: Partial<Capabilities>): ToolContext {
    return { role, agent: role, conversation: "c1", user: "u1", sessionId: "s1", callId: "call1", abort: new AbortController().signal, ...(capabilities as Capabilities) }
  }

  it("hands the Planner's request to the runtime and returns its taskId", async () => {
    const requests: ScheduleRequest[] = []
    const schedule = async (_ctx: ToolContext, request: ScheduleRequest) => (requests.push(request), { taskId: "trigger-1" })
    const args = scheduleTool.parameters.parse({ prompt: "report", type: "recurring", interval: 3600 })
    expect(await scheduleTool.execute(args, context("planner", { schedules: { schedule } }))).toEqual({ taskId: "trigger-1" })
    expect(requests).toEqual([{ prompt: "report", type: "recurring", interval: 3600 }])
  })

  it("refuses every role but the Planner", async () => {
    const args = scheduleTool.parameters.parse({ prompt: "report", type: "recurring", interval: 3600 })
    await expect(scheduleTool.execute(args, context("teller", {}))).rejects.toThrow("Only the Planner creates schedules")
  })
})
