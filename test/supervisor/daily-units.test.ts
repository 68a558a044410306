import { describe, expect, it } from "vitest"
import type { TriggerRecord } from "../../src/core/types.ts"
import { editedTrigger, pausedTrigger, resumedTrigger } from "../../src/schedule/trigger-changes.ts"
import { resolveId } from "../../src/supervisor/id-prefix.ts"
import { isoInZone, shortLocalTime } from "../../src/user/time-zone.ts"

describe("resolveId", () => {
  const ids = ["01JF000000AAAA", "01JF000000AABB", "01JG111111CCCC"]
  it("takes an id, or a unique prefix of at least 4 characters in any case", () => {
    expect(resolveId("01JF000000AAAA", ids)).toEqual({ id: "01JF000000AAAA" })
    expect(resolveId("01jg", ids)).toEqual({ id: "01JG111111CCCC" })
    expect(resolveId("01JF000000AAB", ids)).toEqual({ id: "01JF000000AABB" })
  })
  it("refuses a short, unknown or ambiguous prefix with a clear message", () => {
    expect(resolveId("01J", ids)).toMatchObject({ unknown: true, error: expect.stringContaining("at least 4 characters") })
    expect(resolveId("ZZZZ", ids)).toMatchObject({ unknown: true, error: expect.stringContaining('starting with "ZZZZ"') })
    expect(resolveId("01JF", ids)).toMatchObject({ unknown: false, error: expect.stringMatching(/ambiguous.*01JF000000AAAA, 01JF000000AABB.*more characters/) })
  })
})

describe("time zones as users read them", () => {
  const at = new Date("2026-07-01T07:30:00Z")
  it("gives ISO times with the zone's offset, half hours and DST included", () => {
    expect(isoInZone(at, "Europe/Berlin")).toBe("2026-07-01T09:30:00+02:00")
    expect(isoInZone(at, "Asia/Kolkata")).toBe("2026-07-01T13:00:00+05:30")
    expect(isoInZone(at, "America/New_York")).toBe("2026-07-01T03:30:00-04:00")
    expect(isoInZone(at, "UTC")).toBe("2026-07-01T07:30:00+00:00")
    expect(shortLocalTime(at, "Asia/Tokyo")).toBe("Wed, 1 Jul 2026, 16:30 (Asia/Tokyo)")
  })
})

describe("trigger changes", () => {
  const base: TriggerRecord = {
    id: "T1",
    conversation: "test:c1",
    user: "test:u1",
    kind: "recurring",
    prompt: "digest",
    cron: "0 9 * * *",
    timezone: "Europe/Berlin",
    cooldown: 0,
    timeout: null,
    onMissed: "run-once",
    maxLateness: 3600,
    status: "active",
    nextRunAt: "2026-01-01T08:00:00.000Z",
    createdAt: "2025-12-01T00:00:00.000Z",
    origin: "s:c",
  }

  it("pauses an active trigger without a due time, and refuses to pause twice or an ended one", () => {
    const paused = pausedTrigger(base) as TriggerRecord
    expect(paused).toMatchObject({ status: "paused", nextRunAt: undefined })
    expect(pausedTrigger(paused)).toMatch(/already paused/)
    expect(pausedTrigger({ ...base, status: "ended" })).toMatch(/only an active schedule/)
  })

  it("resumes from now: the due times passed while paused are not caught up", () => {
    const paused = pausedTrigger(base) as TriggerRecord
    const resumed = resumedTrigger(paused) as TriggerRecord
    expect(resumed.status).toBe("active")
    expect(Date.parse(resumed.nextRunAt!)).toBeGreaterThan(Date.now())
    expect(new Date(resumed.nextRunAt!).toLocaleString("en-GB", { timeZone: "Europe/Berlin", hour: "2-digit", minute: "2-digit" })).toBe("09:00")
    // A one-shot whose time passed while paused ends; a conditional one listens from now.
    const once = resumedTrigger({ ...paused, kind: "scheduled", cron: undefined, timezone: undefined, runAt: "2020-01-01T00:00:00Z" }) as TriggerRecord
    expect(once).toMatchObject({ status: "ended", endReason: "its time passed while it was paused" })
    const now = new Date()
    expect(resumedTrigger({ ...paused, kind: "conditional", cron: undefined, condition: { kind: "event", name: "x" }, since: "2020-01-01T00:00:00Z" }, now)).toMatchObject({ status: "active", since: now.toISOString() })
    expect(resumedTrigger(base)).toMatch(/not paused/)
  })

  it("edits in place: same id and creation, new prompt and cadence; a paused trigger stays paused", () => {
    const edited = editedTrigger(base, { type: "recurring", prompt: "new digest", interval: 3600 }) as TriggerRecord
    expect(edited).toMatchObject({ id: "T1", createdAt: base.createdAt, origin: "s:c", prompt: "new digest", interval: 3600, cron: undefined, status: "active" })
    expect(Date.parse(edited.nextRunAt!)).toBeGreaterThan(Date.now())
    const paused = editedTrigger(pausedTrigger(base) as TriggerRecord, { type: "recurring", prompt: "p", interval: 60 }) as TriggerRecord
    expect(paused).toMatchObject({ status: "paused", nextRunAt: undefined })
    expect(editedTrigger({ ...base, status: "cancelled" }, { type: "recurring", prompt: "p", interval: 60 })).toMatch(/create a new one/)
  })
})
