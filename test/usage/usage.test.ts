import { describe, expect, it } from "vitest"
import { summariseUsage, type UsageSample } from "../../src/usage/usage.ts"

const sample = (at: string, role: UsageSample["role"], input: number, cachedInput: number, output: number): UsageSample => ({
  at,
  role,
  agent: role,
  conversation: "test:c1",
  sessionId: "s1",
  model: "mock:scripted",
  input,
  cachedInput,
  output,
})

describe("summariseUsage", () => {
  const now = new Date("2026-03-10T12:00:00Z")
  const samples = [
    sample("2026-03-10T08:00:00Z", "teller", 1000, 900, 50),
    sample("2026-03-10T09:00:00Z", "teller", 1000, 950, 30),
    sample("2026-03-10T09:30:00Z", "worker", 4000, 0, 400),
    sample("2026-03-09T23:59:59Z", "planner", 2000, 1000, 100),
    sample("2026-03-09T10:00:00Z", "compaction", 500, 0, 200),
    sample("2026-03-01T10:00:00Z", "teller", 99_999, 0, 1),
  ]

  it("sums tokens per day and role, oldest day first, with the cached share of the input", () => {
    const { byDay } = summariseUsage(samples, { days: 2, now })
    expect(byDay).toEqual([
      { day: "2026-03-09", role: "planner", calls: 1, input: 2000, cachedInput: 1000, output: 100, cachedShare: 0.5 },
      { day: "2026-03-09", role: "compaction", calls: 1, input: 500, cachedInput: 0, output: 200, cachedShare: 0 },
      { day: "2026-03-10", role: "teller", calls: 2, input: 2000, cachedInput: 1850, output: 80, cachedShare: 0.925 },
      { day: "2026-03-10", role: "worker", calls: 1, input: 4000, cachedInput: 0, output: 400, cachedShare: 0 },
    ])
  })

  it("totals each role over the period and leaves out older samples", () => {
    const { byRole } = summariseUsage(samples, { days: 2, now })
    expect(byRole.map((row) => [row.role, row.calls, row.input])).toEqual([
      ["teller", 2, 2000],
      ["planner", 1, 2000],
      ["worker", 1, 4000],
      ["compaction", 1, 500],
    ])
    expect(summariseUsage(samples, { days: 30, now }).byRole[0]).toMatchObject({ role: "teller", calls: 3, input: 101_999 })
  })

  it("counts today only for one day, a share of 0 without input, and skips a sample with a bad time", () => {
    const odd = [sample("2026-03-10T01:00:00Z", "worker", 0, 0, 5), sample("not a time", "teller", 10, 10, 1)]
    expect(summariseUsage([...samples, ...odd], { days: 1, now }).byRole).toEqual([
      { day: "all", role: "teller", calls: 2, input: 2000, cachedInput: 1850, output: 80, cachedShare: 0.925 },
      { day: "all", role: "worker", calls: 2, input: 4000, cachedInput: 0, output: 405, cachedShare: 0 },
    ])
    expect(summariseUsage([sample("2026-03-10T01:00:00Z", "worker", 0, 0, 5)], { days: 1, now }).byDay[0]!.cachedShare).toBe(0)
  })

  it("totals per user (the conversation for samples without one) and per model, most tokens first, and every day of the period for the chart", () => {
    const other = { ...sample("2026-03-10T10:00:00Z", "teller", 10, 0, 1), user: "telegram:1001", model: "openai:gpt-small" }
    const summary = summariseUsage([...samples, other], { days: 3, now })
    expect(summary.byUser.map((row) => [row.name, row.calls, row.input, row.output])).toEqual([
      ["test:c1", 5, 8500, 780],
      ["telegram:1001", 1, 10, 1],
    ])
    expect(summary.byModel.map((row) => [row.name, row.calls])).toEqual([
      ["mock:scripted", 5],
      ["openai:gpt-small", 1],
    ])
    expect(summary.perDay).toEqual([
      { day: "2026-03-08", calls: 0, input: 0, output: 0 },
      { day: "2026-03-09", calls: 2, input: 2500, output: 300 },
      { day: "2026-03-10", calls: 4, input: 6010, output: 481 },
    ])
  })
})
