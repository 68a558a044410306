import { describe, expect, it } from "vitest"
import { clockIn } from "../../src/console/snapshot.ts"
import { mcpViews } from "../../src/console/mcp-state.ts"
import type { FiringRecord } from "../../src/core/types.ts"
import type { McpHub } from "../../src/mcp/hub.ts"
import { firingStatus } from "../../src/owner/queries.ts"

const firing = (extra: Partial<FiringRecord>): FiringRecord => ({ id: "T/1", triggerId: "T", scheduledFor: "2026-03-10T08:00:00.000Z", at: "2026-03-10T08:00:00.000Z", outcome: "fired", status: "fired", ...extra })

describe("a schedule's last firing in the owner's words", () => {
  it("tells delivered, quiet, failed, missed, running, ran and none apart", () => {
    expect(firingStatus(undefined)).toEqual({ status: "none" })
    expect(firingStatus(firing({ status: "delivered", messageId: "9" })).status).toBe("delivered")
    expect(firingStatus(firing({ status: "delivered", nothingToReport: true })).status).toBe("quiet")
    expect(firingStatus(firing({ status: "ran", nothingToReport: true })).status).toBe("quiet")
    expect(firingStatus(firing({ status: "ran" })).status).toBe("ran")
    expect(firingStatus(firing({ status: "failed", error: "model down" }))).toEqual({ status: "failed", at: "2026-03-10T08:00:00.000Z", error: "model down" })
    expect(firingStatus(firing({ outcome: "missed_skipped", status: "skipped" })).status).toBe("missed")
    expect(firingStatus(firing({ outcome: "skipped_overlap", status: "skipped" })).status).toBe("missed")
    expect(firingStatus(firing({ outcome: "missed_run", status: "delivered" })).status).toBe("delivered")
    expect(firingStatus(firing({ status: "fired" })).status).toBe("running")
  })
})

describe("what the console shows", () => {
  it("writes a time as a clock time in the owner's zone with the zone named", () => {
    expect(clockIn("2026-03-10T08:00:00.000Z", "Europe/Berlin")).toBe("Tue 10 Mar, 09:00 Europe/Berlin")
    expect(clockIn("2026-03-10T08:00:00.000Z", "America/New_York")).toBe("Tue 10 Mar, 04:00 America/New_York")
  })

  it("names an MCP server's state up, down or restarting, and leaves its errors out", () => {
    const hub = {
      status: () => [
        { name: "files", state: "running", tools: ["files_read", "files_list"], failures: 0 },
        { name: "web", state: "restarting", tools: [], failures: 1, lastError: "401 at https://x.example/?key=sk-secret" },
        { name: "db", state: "failed", tools: [], failures: 5, lastError: "gave up" },
        { name: "new", state: "starting", tools: [], failures: 0 },
      ],
    } as unknown as McpHub
    expect(mcpViews(hub)).toEqual([
      { name: "files", state: "up", tools: 2 },
      { name: "web", state: "restarting", tools: 0 },
      { name: "db", state: "down", tools: 0 },
      { name: "new", state: "restarting", tools: 0 },
    ])
    expect(mcpViews(undefined)).toEqual([])
  })
})
