import { Cron } from "croner"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { cronPreview } from "../../src/schedule/cron-preview.ts"
import { parseCron, type CronSchedule } from "../../src/schedule/cron.ts"

/**
 * Vectors are facts about what cron means, in the spirit of the public suites of cron-parser,
 * croner and croniter (day-of-month/day-of-week, L, W, #, nicknames) and of cronie's documented
 * DST rules (man 8 cron); every date below was worked out by hand or with the system's tzdata
 * (`TZ=… date`), not by the library under test.
 */
function read(expression: string, timezone?: string): CronSchedule {
  const result = parseCron(expression, timezone)
  if ("error" in result) throw new Error(result.error)
  return result.schedule
}

function next(expression: string, from: string, count: number, timezone = "UTC"): string[] {
  return read(expression, timezone)
    .nextRuns(count, new Date(from))
    .map((at) => at.toISOString().replace(":00.000Z", "Z"))
}

describe("day of month and day of week", () => {
  it.each([
    // Both restricted: either matches (Vixie, cronie, POSIX). 1 Jan 2026 is a Thursday.
    ["0 9 1 * MON", ["2026-01-05T09:00Z", "2026-01-12T09:00Z", "2026-01-19T09:00Z", "2026-01-26T09:00Z", "2026-02-01T09:00Z", "2026-02-02T09:00Z"]],
    ["0 9 1-31 * MON", ["2026-01-02T09:00Z", "2026-01-03T09:00Z", "2026-01-04T09:00Z", "2026-01-05T09:00Z", "2026-01-06T09:00Z", "2026-01-07T09:00Z"]],
    // One of them starts with "*": both must match (cronie's DOM_STAR/DOW_STAR), so odd-dated Mondays…
    ["0 9 */2 * MON", ["2026-01-05T09:00Z", "2026-01-19T09:00Z", "2026-02-09T09:00Z", "2026-02-23T09:00Z", "2026-03-09T09:00Z"]],
    // …and firsts of the month that fall on Sun, Tue, Thu or Sat.
    ["0 9 1 * */2", ["2026-02-01T09:00Z", "2026-03-01T09:00Z", "2026-08-01T09:00Z", "2026-09-01T09:00Z"]],
    ["0 9 * * MON", ["2026-01-05T09:00Z", "2026-01-12T09:00Z"]],
    ["0 9 * * 7", ["2026-01-04T09:00Z", "2026-01-11T09:00Z"]], // 7 is Sunday too
    ["0 9 13 * FRI", ["2026-01-02T09:00Z", "2026-01-09T09:00Z", "2026-01-13T09:00Z", "2026-01-16T09:00Z"]],
  ])("%s", (expression, expected) => {
    expect(next(expression, "2026-01-01T12:00:00Z", expected.length)).toEqual(expected)
  })
})

describe("extensions and nicknames", () => {
  it.each([
    ["0 0 L * *", "2024-01-15T00:00:00Z", ["2024-01-31T00:00Z", "2024-02-29T00:00Z", "2024-03-31T00:00Z", "2024-04-30T00:00Z"]],
    ["0 0 L 2 *", "2026-01-01T00:00:00Z", ["2026-02-28T00:00Z", "2027-02-28T00:00Z", "2028-02-29T00:00Z"]],
    ["0 0 29 2 *", "2026-01-01T00:00:00Z", ["2028-02-29T00:00Z", "2032-02-29T00:00Z"]],
    // 1 Aug 2026 is a Saturday: the nearest weekday in the month is Monday the 3rd.
    ["0 0 1W 8 *", "2026-07-01T00:00:00Z", ["2026-08-03T00:00Z"]],
    // 31 May 2026 is a Sunday: W does not cross into June, so Friday the 29th.
    ["0 0 31W 5 *", "2026-05-01T00:00:00Z", ["2026-05-29T00:00Z"]],
    ["0 0 LW * *", "2026-01-01T00:00:00Z", ["2026-01-30T00:00Z", "2026-02-27T00:00Z", "2026-03-31T00:00Z"]],
    ["0 0 * * 5L", "2026-01-01T00:00:00Z", ["2026-01-30T00:00Z", "2026-02-27T00:00Z", "2026-03-27T00:00Z"]],
    ["0 0 * * FRI#L", "2026-01-01T00:00:00Z", ["2026-01-30T00:00Z", "2026-02-27T00:00Z"]],
    ["0 0 * * MON#1", "2026-01-01T00:00:00Z", ["2026-01-05T00:00Z", "2026-02-02T00:00Z", "2026-03-02T00:00Z"]],
    ["0 0 * * 6#3", "2026-01-01T00:00:00Z", ["2026-01-17T00:00Z", "2026-02-21T00:00Z"]],
    ["0 0 * * MON#5", "2026-01-01T00:00:00Z", ["2026-03-30T00:00Z", "2026-06-29T00:00Z", "2026-08-31T00:00Z"]],
    ["@yearly", "2026-03-01T00:00:00Z", ["2027-01-01T00:00Z"]],
    ["@annually", "2026-03-01T00:00:00Z", ["2027-01-01T00:00Z"]],
    ["@monthly", "2026-03-01T00:00:00Z", ["2026-04-01T00:00Z"]],
    ["@weekly", "2026-01-01T00:00:00Z", ["2026-01-04T00:00Z"]],
    ["@daily", "2026-01-01T00:00:00Z", ["2026-01-02T00:00Z"]],
    ["@midnight", "2026-01-01T00:00:00Z", ["2026-01-02T00:00Z"]],
    ["@hourly", "2026-01-01T00:30:00Z", ["2026-01-01T01:00Z", "2026-01-01T02:00Z"]],
    ["@Daily", "2026-01-01T00:00:00Z", ["2026-01-02T00:00Z"]],
    ["0 30 9 * * *", "2026-01-01T00:00:00Z", ["2026-01-01T09:30Z"]],
    ["0 22 * * 1-5", "2026-01-02T23:00:00Z", ["2026-01-05T22:00Z"]], // Friday night to Monday
    ["5 0 * 8 *", "2026-01-01T00:00:00Z", ["2026-08-01T00:05Z", "2026-08-02T00:05Z"]],
    ["0 0-23/6 * * *", "2026-01-01T01:00:00Z", ["2026-01-01T06:00Z", "2026-01-01T12:00Z", "2026-01-01T18:00Z", "2026-01-02T00:00Z"]],
  ])("%s from %s", (expression, from, expected) => {
    expect(next(expression, from, expected.length)).toEqual(expected)
  })

  it.each([
    ["0 9 * *", "expected 5 or 6 fields but got 4"],
    ["0 0 0 1 1 * 2030", "expected 5 or 6 fields but got 7"],
    ["2030-01-01T09:00:00", "expected 5 or 6 fields but got 1"], // croner alone would take it as a one-off
    ["", "expected 5 or 6 fields but got 0"],
    ["@reboot", 'unknown nickname "@reboot"'],
    ["@every 5m", 'unknown nickname "@every 5m"'],
    ["61 * * * *", "Invalid value for minute: 61"],
    ["0 24 * * *", "Invalid value for hour: 24"],
    ["0 0 * * 8", "Invalid value for dayOfWeek: 8"],
    ["0 0 * * MON#6", "nth weekday out of range"],
    ["5/5 * * * *", "stepping with numeric prefix"],
    ["0 0 L-2 * *", "L has to be a value of its own"],
    ["0 0 * * * extra", "illegal characters"],
    ["0 0 31 2 *", "never matches a date"],
  ])("refuses %j with the reason", (expression, reason) => {
    const result = parseCron(expression)
    expect(result).toHaveProperty("error")
    expect((result as { error: string }).error).toContain(reason)
  })

  it("refuses an unknown time zone", () => {
    expect(parseCron("0 9 * * *", "Europe/Berlim")).toEqual({ error: 'unknown IANA time zone "Europe/Berlim" (e.g. "Europe/Berlin")' })
  })
})

/** Each zone's 2026 transitions, checked with `TZ=<zone> date -d <instant>`. */
describe("DST as cronie documents it", () => {
  it.each([
    // Europe/Berlin: 29 March 02:00 CET → 03:00 CEST; 25 October 03:00 CEST → 02:00 CET.
    ["Europe/Berlin", "30 2 * * *", "2026-03-28T12:00:00Z", ["2026-03-29T01:00Z", "2026-03-30T00:30Z"]], // gap: 03:00 CEST that day
    ["Europe/Berlin", "30 2 * * *", "2026-10-24T12:00:00Z", ["2026-10-25T00:30Z", "2026-10-26T01:30Z"]], // repeat: first (CEST) only
    ["Europe/Berlin", "0,30 2 * * *", "2026-03-28T22:00:00Z", ["2026-03-29T01:00Z", "2026-03-30T00:00Z"]], // both gap times: one run after the jump
    ["Europe/Berlin", "*/30 * * * *", "2026-03-29T00:20:00Z", ["2026-03-29T00:30Z", "2026-03-29T01:00Z", "2026-03-29T01:30Z"]], // 01:30 CET, 03:00, 03:30 CEST
    ["Europe/Berlin", "*/30 * * * *", "2026-10-24T23:50:00Z", ["2026-10-25T00:00Z", "2026-10-25T00:30Z", "2026-10-25T01:00Z", "2026-10-25T01:30Z", "2026-10-25T02:00Z"]],
    ["Europe/Berlin", "0 * * * *", "2026-10-24T23:30:00Z", ["2026-10-25T00:00Z", "2026-10-25T01:00Z", "2026-10-25T02:00Z"]], // 02:00 CEST, 02:00 CET, 03:00 CET
    ["Europe/Berlin", "0 9 * * *", "2026-03-27T12:00:00Z", ["2026-03-28T08:00Z", "2026-03-29T07:00Z"]],
    // America/New_York: 8 March 02:00 EST → 03:00 EDT; 1 November 02:00 EDT → 01:00 EST.
    ["America/New_York", "30 2 * * *", "2026-03-07T12:00:00Z", ["2026-03-08T07:00Z", "2026-03-09T06:30Z"]],
    ["America/New_York", "30 1 * * *", "2026-10-31T12:00:00Z", ["2026-11-01T05:30Z", "2026-11-02T06:30Z"]],
    ["America/New_York", "*/30 * * * *", "2026-11-01T04:50:00Z", ["2026-11-01T05:00Z", "2026-11-01T05:30Z", "2026-11-01T06:00Z", "2026-11-01T06:30Z", "2026-11-01T07:00Z"]],
    // Australia/Lord_Howe, a 30-minute shift: 4 October 02:00 +10:30 → 02:30 +11; 5 April 02:00 +11 → 01:30 +10:30.
    ["Australia/Lord_Howe", "15 2 * * *", "2026-10-03T00:00:00Z", ["2026-10-03T15:30Z", "2026-10-04T15:15Z"]],
    ["Australia/Lord_Howe", "45 1 * * *", "2026-04-04T00:00:00Z", ["2026-04-04T14:45Z", "2026-04-05T15:15Z"]],
    ["Australia/Lord_Howe", "*/15 * * * *", "2026-04-04T14:20:00Z", ["2026-04-04T14:30Z", "2026-04-04T14:45Z", "2026-04-04T15:00Z", "2026-04-04T15:15Z", "2026-04-04T15:30Z"]],
    // Pacific/Auckland, east of UTC: 27 September 02:00 NZST → 03:00 NZDT; 5 April 03:00 NZDT → 02:00 NZST.
    ["Pacific/Auckland", "30 2 * * *", "2026-09-26T00:00:00Z", ["2026-09-26T14:00Z", "2026-09-27T13:30Z"]],
    ["Pacific/Auckland", "30 2 * * *", "2026-04-04T00:00:00Z", ["2026-04-04T13:30Z", "2026-04-05T14:30Z"]],
    ["Pacific/Auckland", "0 * * * *", "2026-04-04T13:30:00Z", ["2026-04-04T14:00Z", "2026-04-04T15:00Z"]], // 02:00 NZST, 03:00 NZST
    // Asia/Kolkata: no DST, +05:30.
    ["Asia/Kolkata", "30 9 * * *", "2026-01-01T00:00:00Z", ["2026-01-01T04:00Z", "2026-01-02T04:00Z"]],
    ["Asia/Kolkata", "0 0 1 * *", "2026-01-01T00:00:00Z", ["2026-01-31T18:30Z"]],
  ])("%s %s from %s", (zone, expression, from, expected) => {
    expect(next(expression, from, expected.length, zone)).toEqual(expected)
  })

  // Handled on top of croner (cron.ts, note 1): cronie calls a job fixed-time when its minute and
  // hour fields do not START with "*", so a stepped range is fixed-time there; croner alone
  // treats it as an interval job and skips the gap / runs the repeated hour twice.
  it("treats a stepped range that does not start with * as fixed-time, as cronie does (croner alone does not)", () => {
    const croner = (pattern: string, from: string, n: number) =>
      new Cron(pattern, { timezone: "Europe/Berlin", paused: true, fixedTimeRule: "no-wildcard" }).nextRuns(n, new Date(from)).map((at) => at.toISOString())
    expect(croner("0 0-23/2 * * *", "2026-03-28T22:30:00Z", 2)[1]).toBe("2026-03-29T02:00:00.000Z") // croner: 02:00 skipped
    expect(next("0 0-23/2 * * *", "2026-03-28T22:30:00Z", 2, "Europe/Berlin")).toEqual(["2026-03-28T23:00Z", "2026-03-29T01:00Z"]) // 03:00 CEST
    expect(croner("30 0-6/2 * * *", "2026-10-24T21:00:00Z", 3)).toContain("2026-10-25T01:30:00.000Z") // croner: 02:30 twice
    expect(next("30 0-6/2 * * *", "2026-10-24T21:00:00Z", 3, "Europe/Berlin")).toEqual(["2026-10-24T22:30Z", "2026-10-25T00:30Z", "2026-10-25T03:30Z"])
    expect(next("0,*/30 2 * * *", "2026-10-24T21:00:00Z", 3, "Europe/Berlin")).toEqual(["2026-10-25T00:00Z", "2026-10-25T00:30Z", "2026-10-26T01:00Z"])
    expect(read("0 0-23/2 * * *").kind).toBe("fixed-time")
    expect(read("0 */2 * * *").kind).toBe("wildcard")
    expect(read("@hourly").kind).toBe("wildcard")
    expect(read("@daily").kind).toBe("fixed-time")
  })

  // Handled on top of croner (cron.ts, note 2): croner ORs "*/2" with a weekday; cronie ANDs.
  it("ANDs the day fields when one starts with * (croner alone ORs them)", () => {
    const croner = new Cron("0 9 */2 * MON", { timezone: "UTC", paused: true }).nextRun(new Date("2026-01-01T12:00:00Z"))
    expect(croner?.toISOString()).toBe("2026-01-03T09:00:00.000Z") // a Saturday
    expect(next("0 9 */2 * MON", "2026-01-01T12:00:00Z", 1)).toEqual(["2026-01-05T09:00Z"])
  })
})

describe("catch-up after downtime (latest due time in a window)", () => {
  const at = (iso: string) => new Date(iso)
  it.each([
    // Down over Berlin's repeated hour until 02:45 CET: a fixed time's only run was the first 02:30…
    ["30 2 * * *", "Europe/Berlin", "2026-10-24T22:00:00Z", "2026-10-25T01:45:00Z", "2026-10-25T00:30:00.000Z"],
    // …a wildcard one's latest is the second pass.
    ["30 * * * *", "Europe/Berlin", "2026-10-24T22:00:00Z", "2026-10-25T01:45:00Z", "2026-10-25T01:30:00.000Z"],
    // Down over the spring gap: the fixed time ran right after the jump.
    ["30 2 * * *", "Europe/Berlin", "2026-03-28T23:00:00Z", "2026-03-29T01:10:00Z", "2026-03-29T01:00:00.000Z"],
    ["30 2 * * *", "Pacific/Auckland", "2026-04-04T12:00:00Z", "2026-04-04T14:45:00Z", "2026-04-04T13:30:00.000Z"],
    ["45 1 * * *", "Australia/Lord_Howe", "2026-04-04T14:00:00Z", "2026-04-04T15:20:00Z", "2026-04-04T14:45:00.000Z"],
    // Both ends count.
    ["0 9 * * *", "UTC", "2026-01-01T09:00:00Z", "2026-01-01T09:00:00Z", "2026-01-01T09:00:00.000Z"],
    ["0 9 * * *", "UTC", "2026-01-01T09:00:00.001Z", "2026-01-02T08:59:59.999Z", undefined],
  ])("%s in %s over [%s, %s]", (expression, zone, from, to, expected) => {
    expect(read(expression, zone).latest(at(from), at(to))?.toISOString()).toBe(expected)
  })

  it("agrees with stepping forward through the window, for any expression, zone and window", () => {
    const zones = ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Pacific/Auckland", "Asia/Kolkata", "UTC"]
    const minute = fc.constantFrom("0", "30", "*/15", "*", "0,45", "10-20/5")
    const hour = fc.constantFrom("*", "2", "1,2,3", "0-23/2", "*/3", "9")
    fc.assert(
      fc.property(minute, hour, fc.constantFrom(...zones), fc.integer({ min: 0, max: 365 * 24 * 60 }), fc.integer({ min: 0, max: 6 * 60 }), (m, h, zone, start, length) => {
        const schedule = read(`${m} ${h} * * *`, zone)
        const from = new Date(Date.UTC(2026, 0, 1) + start * 60_000 + 17_000)
        const to = new Date(from.getTime() + length * 60_000)
        let last: Date | undefined
        for (let run = schedule.next(new Date(from.getTime() - 1)); run && run <= to; run = schedule.next(run)) last = run
        expect(schedule.latest(from, to)?.toISOString()).toBe(last?.toISOString())
      }),
      { numRuns: 200 },
    )
  })
})

describe("steward cron", () => {
  it("prints the next runs in the zone, with local time and UTC", () => {
    const result = cronPreview(["30 2 * * *", "--tz", "Europe/Berlin", "--count", "2"], new Date("2026-03-28T12:00:00Z"))
    expect(result).toEqual({
      text:
        '"30 2 * * *" in Europe/Berlin (fixed time: a time skipped by a DST change runs right after the jump, a repeated one once (first pass)); the next 2:\n' +
        "  Sun 2026-03-29 03:00:00 GMT+02:00   2026-03-29T01:00:00Z\n" +
        "  Mon 2026-03-30 02:30:00 GMT+02:00   2026-03-30T00:30:00Z\n",
      data: {
        expression: "30 2 * * *",
        timezone: "Europe/Berlin",
        kind: "fixed-time",
        runs: [
          { local: "Sun 2026-03-29 03:00:00 GMT+02:00", utc: "2026-03-29T01:00:00Z" },
          { local: "Mon 2026-03-30 02:30:00 GMT+02:00", utc: "2026-03-30T00:30:00Z" },
        ],
      },
    })
  })

  it("takes --tz=… and an unquoted expression, and says what is wrong", () => {
    expect(cronPreview(["@daily", "--tz=Asia/Kolkata", "--count=1"], new Date("2026-01-01T00:00:00Z"))).toMatchObject({ text: expect.stringContaining("Fri 2026-01-02 00:00:00 GMT+05:30   2026-01-01T18:30:00Z") })
    expect(cronPreview(["0", "9", "*", "*", "MON", "--tz", "UTC", "--count", "1"], new Date("2026-01-01T00:00:00Z"))).toMatchObject({ text: expect.stringContaining("2026-01-05T09:00:00Z") })
    expect(cronPreview(["0 9 * *"])).toEqual({ error: expect.stringContaining("expected 5 or 6 fields but got 4") })
    expect(cronPreview(["0 9 * * *", "--count", "0"])).toEqual({ error: '--count is a whole number from 1 to 100, not "0"' })
    expect(cronPreview(["0 9 * * *", "--tz"])).toEqual({ error: "--tz needs a value" })
    expect(cronPreview([])).toEqual({ error: expect.stringContaining("usage:") })
  })
})
