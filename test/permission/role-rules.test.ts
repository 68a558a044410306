import { describe, expect, it } from "vitest"
import { ZodError } from "zod"
import { disabled, evaluate, type Ruleset } from "../../src/permission/permission.ts"
import { defaults, forRole, parseConfig } from "../../src/permission/roles.ts"
import type { Role } from "../../src/core/types.ts"

const TOOLS = [
  "delegate",
  "reply",
  "remember",
  "get_recent_history",
  "get_history_by_time",
  "search_memory",
  "ask_user",
  "schedule",
  "list_tasks",
  "cancel_task",
  "fetch_url",
  "read_file",
  "write_file",
  "list_files",
]

const OFFERED: Record<Role, string[]> = {
  teller: ["delegate", "reply", "remember", "ask_user", "list_tasks", "cancel_task"],
  planner: ["delegate", "get_recent_history", "get_history_by_time", "search_memory", "schedule", "list_tasks", "cancel_task"],
  worker: ["fetch_url", "read_file", "write_file", "list_files"],
}

const offered = (rules: Ruleset) => {
  const off = disabled(TOOLS, rules)
  return TOOLS.filter((tool) => !off.has(tool))
}

describe("defaults", () => {
  it.each(Object.keys(OFFERED) as Role[])("offers the %s exactly its tools from the table", (role) => {
    expect(offered(defaults[role])).toEqual(OFFERED[role])
  })

  it.each(Object.keys(OFFERED) as Role[])("allows the %s its tools and denies every other tool", (role) => {
    for (const tool of TOOLS.filter((t) => t !== "delegate")) {
      const expected = OFFERED[role].includes(tool) ? "allow" : "deny"
      expect(evaluate(tool, "*", defaults[role]).action, tool).toBe(expected)
      expect(evaluate(tool, "some/value", defaults[role]).action, tool).toBe(expected)
    }
  })

  it.each(Object.keys(OFFERED) as Role[])("hides and denies a tool the table does not know from the %s", (role) => {
    expect(disabled(["shell"], defaults[role]).has("shell")).toBe(true)
    expect(evaluate("shell", "ls", defaults[role]).action).toBe("deny")
  })

  it("lets the teller delegate only to the planner", () => {
    expect(disabled(["delegate"], defaults.teller).has("delegate")).toBe(false)
    expect(evaluate("delegate", "planner", defaults.teller).action).toBe("allow")
    expect(evaluate("delegate", "researcher", defaults.teller).action).toBe("deny")
    expect(evaluate("delegate", "default", defaults.teller).action).toBe("deny")
  })

  it("lets the planner delegate to any worker type", () => {
    expect(evaluate("delegate", "researcher", defaults.planner).action).toBe("allow")
    expect(evaluate("delegate", "default", defaults.planner).action).toBe("allow")
  })

  it("never lets a worker delegate", () => {
    expect(disabled(["delegate"], defaults.worker).has("delegate")).toBe(true)
    expect(evaluate("delegate", "default", defaults.worker).action).toBe("deny")
    expect(evaluate("delegate", "planner", defaults.worker).action).toBe("deny")
  })

  it("starts every role with a blanket deny", () => {
    for (const role of Object.keys(OFFERED) as Role[]) {
      expect(defaults[role][0]).toEqual({ permission: "*", pattern: "*", action: "deny" })
      expect(defaults[role].slice(1).every((rule) => rule.action === "allow")).toBe(true)
    }
  })
})

describe("forRole and parseConfig", () => {
  it("returns the defaults when there are no extra rules", () => {
    expect(forRole("teller")).toEqual(defaults.teller)
    expect(forRole("worker", {})).toEqual(defaults.worker)
    expect(forRole("planner", { worker: [{ permission: "*", pattern: "*", action: "allow" }] })).toEqual(defaults.planner)
  })

  it("appends extra rules after the defaults so they win", () => {
    const extra = parseConfig({
      worker: [
        { permission: "fetch_url", pattern: "https://internal.example/*", action: "deny" },
        { permission: "write_file", pattern: "*", action: "deny" },
        { permission: "shell", pattern: "*", action: "ask" },
      ],
      teller: [{ permission: "delegate", pattern: "researcher", action: "allow" }],
    })
    const worker = forRole("worker", extra)
    expect(worker.slice(0, defaults.worker.length)).toEqual(defaults.worker)
    expect(evaluate("fetch_url", "https://internal.example/admin", worker).action).toBe("deny")
    expect(evaluate("fetch_url", "https://example.com/", worker).action).toBe("allow")
    expect(disabled(["write_file"], worker).has("write_file")).toBe(true)
    expect(disabled(["shell"], worker).has("shell")).toBe(false)
    expect(evaluate("shell", "ls", worker).action).toBe("ask")
    expect(evaluate("delegate", "researcher", forRole("teller", extra)).action).toBe("allow")
    expect(evaluate("delegate", "researcher", forRole("planner", extra)).action).toBe("allow")
  })

  it("accepts an empty file", () => {
    expect(parseConfig({})).toEqual({})
  })

  it.each([
    ["an unknown role", { tellr: [] }],
    ["an unknown action", { worker: [{ permission: "fetch_url", pattern: "*", action: "maybe" }] }],
    ["an empty pattern", { worker: [{ permission: "fetch_url", pattern: "", action: "deny" }] }],
    ["an empty permission", { worker: [{ permission: "", pattern: "*", action: "deny" }] }],
    ["a missing field", { worker: [{ permission: "fetch_url", action: "deny" }] }],
    ["a ruleset that is not an array", { worker: { fetch_url: "deny" } }],
    ["a non-object", ["worker"]],
  ])("rejects %s", (_, json) => {
    expect(() => parseConfig(json)).toThrow(ZodError)
  })
})

describe("web_search and granted rules", () => {
  it("allows web_search to the planner and workers, not the teller", () => {
    expect(evaluate("web_search", "cats", defaults.planner).action).toBe("allow")
    expect(evaluate("web_search", "cats", defaults.worker).action).toBe("allow")
    expect(evaluate("web_search", "cats", defaults.teller).action).toBe("deny")
  })

  it("puts what the configuration grants (MCP tools) after the defaults and before PERMISSIONS_FILE", () => {
    const granted: Ruleset = [{ permission: "github_*", pattern: "*", action: "allow" }]
    expect(evaluate("github_list_issues", "{}", forRole("worker", undefined, granted)).action).toBe("allow")
    expect(evaluate("github_list_issues", "{}", forRole("planner", undefined)).action).toBe("deny")
    const extra = { worker: [{ permission: "github_delete_*", pattern: "*", action: "deny" as const }, { permission: "github_create_*", pattern: "*", action: "ask" as const }] }
    const rules = forRole("worker", extra, granted)
    expect(evaluate("github_delete_repo", "{}", rules).action).toBe("deny")
    expect(evaluate("github_create_issue", "{}", rules).action).toBe("ask")
    expect(evaluate("github_list_issues", "{}", rules).action).toBe("allow")
  })
})
