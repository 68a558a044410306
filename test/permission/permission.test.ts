import { describe, expect, it } from "vitest"
import { ZodError } from "zod"
import { disabled, evaluate, match, merge, type Ruleset } from "../../src/permission/permission.ts"
import { defaults, forRole, parseConfig } from "../../src/permission/roles.ts"
import type { Role } from "../../src/core/types.ts"

describe("match", () => {
  it("handles glob tokens and keeps regex specials literal", () => {
    expect(match("file1.txt", "file?.txt")).toBe(true)
    expect(match("file12.txt", "file?.txt")).toBe(false)
    expect(match("foo+bar", "foo+bar")).toBe(true)
    expect(match("fooobar", "fo+bar")).toBe(false)
    expect(match("fileXtxt", "file.txt")).toBe(false)
    expect(match("a(b)[c]{d}|e^f$g\\h", "a(b)[c]{d}|e^f$g\\h")).toBe(true)
  })

  it("anchors the whole value", () => {
    expect(match("xbash", "bash")).toBe(false)
    expect(match("bashx", "bash")).toBe(false)
    expect(match("bash", "bash")).toBe(true)
  })

  it("lets * match any run, empty and / included", () => {
    expect(match("", "*")).toBe(true)
    expect(match("anything/at/all", "*")).toBe(true)
    expect(match("src/a/b/c.ts", "src/*")).toBe(true)
    expect(match("src/foo.ts", "src/*.ts")).toBe(true)
    expect(match("src/a/foo.ts", "src/*.ts")).toBe(true)
    expect(match("src/foo.tsx", "src/*.ts")).toBe(false)
    expect(match("lib/foo.ts", "src/*.ts")).toBe(false)
    expect(match("node_modules/zod/index.js", "node_modules/*")).toBe(true)
    expect(match("src/node_modules/x", "node_modules/*")).toBe(false)
    expect(match("mcp_server_tool", "mcp_*")).toBe(true)
  })

  it("lets ? match exactly one character, / and emoji included", () => {
    expect(match("a", "?")).toBe(true)
    expect(match("/", "?")).toBe(true)
    expect(match("🙂", "?")).toBe(true)
    expect(match("ab", "?")).toBe(false)
    expect(match("", "?")).toBe(false)
  })

  it("matches across newlines", () => {
    expect(match("line one\nline two", "line*two")).toBe(true)
    expect(match("a\nb", "a?b")).toBe(true)
  })

  it("lets a trailing ' *' match the value with or without arguments", () => {
    expect(match("ls", "ls *")).toBe(true)
    expect(match("ls -la", "ls *")).toBe(true)
    expect(match("ls foo bar", "ls *")).toBe(true)
    expect(match("ls", "ls*")).toBe(true)
    expect(match("lstmeval", "ls*")).toBe(true)
    expect(match("lstmeval", "ls *")).toBe(false)
    expect(match("git status", "git *")).toBe(true)
    expect(match("git", "git *")).toBe(true)
    expect(match("git commit -m foo", "git *")).toBe(true)
  })

  it("applies the trailing ' *' rule only at the end of the pattern", () => {
    expect(match("git", "git * x")).toBe(false)
    expect(match("git a x", "git * x")).toBe(true)
  })
})

describe("merge", () => {
  it("concatenates rulesets in order", () => {
    expect(
      merge(
        [{ permission: "bash", pattern: "*", action: "allow" }],
        [{ permission: "bash", pattern: "rm", action: "ask" }],
        [{ permission: "edit", pattern: "*", action: "allow" }],
      ),
    ).toEqual([
      { permission: "bash", pattern: "*", action: "allow" },
      { permission: "bash", pattern: "rm", action: "ask" },
      { permission: "edit", pattern: "*", action: "allow" },
    ])
  })

  it("keeps rules for the same permission instead of replacing them", () => {
    expect(merge([{ permission: "bash", pattern: "*", action: "allow" }], [{ permission: "bash", pattern: "*", action: "deny" }])).toEqual([
      { permission: "bash", pattern: "*", action: "allow" },
      { permission: "bash", pattern: "*", action: "deny" },
    ])
  })

  it("ignores empty rulesets", () => {
    expect(merge([{ permission: "bash", pattern: "*", action: "allow" }], [])).toEqual([{ permission: "bash", pattern: "*", action: "allow" }])
    expect(merge()).toEqual([])
  })

  it("preserves rule order within each ruleset", () => {
    expect(
      merge(
        [
          { permission: "edit", pattern: "src/*", action: "allow" },
          { permission: "edit", pattern: "src/secret/*", action: "deny" },
        ],
        [{ permission: "edit", pattern: "src/secret/ok.ts", action: "allow" }],
      ),
    ).toEqual([
      { permission: "edit", pattern: "src/*", action: "allow" },
      { permission: "edit", pattern: "src/secret/*", action: "deny" },
      { permission: "edit", pattern: "src/secret/ok.ts", action: "allow" },
    ])
  })

  it("lets a later ruleset override an earlier default", () => {
    const merged = merge([{ permission: "*", pattern: "*", action: "ask" }], [{ permission: "bash", pattern: "*", action: "allow" }])
    expect(evaluate("bash", "ls", merged).action).toBe("allow")
    expect(evaluate("edit", "foo.ts", merged).action).toBe("ask")
    expect(evaluate("bash", "ls", merge([{ permission: "bash", pattern: "*", action: "allow" }], [{ permission: "bash", pattern: "*", action: "ask" }])).action).toBe("ask")
  })
})

describe("evaluate", () => {
  it("matches exact and wildcard patterns", () => {
    expect(evaluate("bash", "rm", [{ permission: "bash", pattern: "rm", action: "deny" }]).action).toBe("deny")
    expect(evaluate("bash", "rm", [{ permission: "bash", pattern: "*", action: "allow" }]).action).toBe("allow")
  })

  it("returns the winning rule itself", () => {
    const rule = { permission: "edit", pattern: "src/*", action: "allow" } as const
    expect(evaluate("edit", "src/a.ts", [rule])).toEqual(rule)
  })

  it("lets the last matching rule win", () => {
    expect(
      evaluate("bash", "rm", [
        { permission: "bash", pattern: "*", action: "allow" },
        { permission: "bash", pattern: "rm", action: "deny" },
      ]).action,
    ).toBe("deny")
    expect(
      evaluate("bash", "rm", [
        { permission: "bash", pattern: "rm", action: "deny" },
        { permission: "bash", pattern: "*", action: "allow" },
      ]).action,
    ).toBe("allow")
    expect(
      evaluate("bash", "/bin/rm", [
        { permission: "bash", pattern: "*", action: "allow" },
        { permission: "bash", pattern: "/bin/rm", action: "deny" },
      ]).action,
    ).toBe("deny")
  })

  it("matches globs on paths, in rule order rather than by specificity", () => {
    expect(evaluate("edit", "src/foo.ts", [{ permission: "edit", pattern: "src/*", action: "allow" }]).action).toBe("allow")
    expect(
      evaluate("edit", "src/components/Button.tsx", [
        { permission: "edit", pattern: "src/*", action: "deny" },
        { permission: "edit", pattern: "src/components/*", action: "allow" },
      ]).action,
    ).toBe("allow")
    expect(
      evaluate("edit", "src/components/Button.tsx", [
        { permission: "edit", pattern: "src/components/*", action: "allow" },
        { permission: "edit", pattern: "src/*", action: "deny" },
      ]).action,
    ).toBe("deny")
    const rules: Ruleset = [
      { permission: "read_file", pattern: "*", action: "allow" },
      { permission: "read_file", pattern: "node_modules/*", action: "deny" },
      { permission: "read_file", pattern: "src/*.ts", action: "ask" },
    ]
    expect(evaluate("read_file", "node_modules/zod/index.js", rules).action).toBe("deny")
    expect(evaluate("read_file", "src/app.ts", rules).action).toBe("ask")
    expect(evaluate("read_file", "README.md", rules).action).toBe("allow")
  })

  it("skips rules whose pattern does not match", () => {
    expect(
      evaluate("edit", "src/foo.ts", [
        { permission: "edit", pattern: "*", action: "ask" },
        { permission: "edit", pattern: "test/*", action: "deny" },
        { permission: "edit", pattern: "src/*", action: "allow" },
      ]).action,
    ).toBe("allow")
    expect(
      evaluate("edit", "src/secret.ts", [
        { permission: "edit", pattern: "*", action: "ask" },
        { permission: "edit", pattern: "src/*", action: "allow" },
        { permission: "edit", pattern: "src/secret.ts", action: "deny" },
      ]).action,
    ).toBe("deny")
  })

  it("asks when no rule matches", () => {
    expect(evaluate("bash", "rm", [])).toEqual({ permission: "bash", pattern: "*", action: "ask" })
    expect(evaluate("bash", "rm")).toEqual({ permission: "bash", pattern: "*", action: "ask" })
    expect(evaluate("unknown_tool", "anything", [{ permission: "bash", pattern: "*", action: "allow" }]).action).toBe("ask")
    expect(evaluate("edit", "etc/passwd", [{ permission: "edit", pattern: "src/*", action: "allow" }]).action).toBe("ask")
  })

  it("matches the permission by wildcard too", () => {
    expect(evaluate("bash", "rm", [{ permission: "*", pattern: "*", action: "deny" }]).action).toBe("deny")
    expect(evaluate("bash", "rm", [{ permission: "*", pattern: "rm", action: "deny" }]).action).toBe("deny")
    expect(evaluate("mcp_server_tool", "anything", [{ permission: "mcp_*", pattern: "*", action: "allow" }]).action).toBe("allow")
    expect(evaluate("read_fil", "x", [{ permission: "read_fil?", pattern: "*", action: "allow" }]).action).toBe("ask")
  })

  it("combines specific and wildcard permissions by order", () => {
    expect(
      evaluate("bash", "rm", [
        { permission: "*", pattern: "*", action: "deny" },
        { permission: "bash", pattern: "*", action: "allow" },
      ]).action,
    ).toBe("allow")
    expect(
      evaluate("edit", "src/foo.ts", [
        { permission: "*", pattern: "*", action: "deny" },
        { permission: "edit", pattern: "src/*", action: "allow" },
      ]).action,
    ).toBe("allow")
    expect(
      evaluate("mcp_dangerous", "anything", [
        { permission: "*", pattern: "*", action: "ask" },
        { permission: "mcp_*", pattern: "*", action: "allow" },
        { permission: "mcp_dangerous", pattern: "*", action: "deny" },
      ]).action,
    ).toBe("deny")
    expect(
      evaluate("unknown_tool", "anything", [
        { permission: "*", pattern: "*", action: "ask" },
        { permission: "bash", pattern: "*", action: "allow" },
      ]).action,
    ).toBe("ask")
    expect(
      evaluate("bash", "rm", [
        { permission: "bash", pattern: "*", action: "allow" },
        { permission: "*", pattern: "*", action: "deny" },
      ]).action,
    ).toBe("deny")
  })

  it("treats several rulesets as one, later ones last", () => {
    const config: Ruleset = [{ permission: "bash", pattern: "*", action: "allow" }]
    const approved: Ruleset = [{ permission: "bash", pattern: "rm", action: "deny" }]
    expect(evaluate("bash", "rm", config, approved).action).toBe("deny")
    expect(evaluate("bash", "rm", approved, config).action).toBe("allow")
  })
})

describe("disabled", () => {
  it("disables nothing when everything is allowed or asked", () => {
    expect(disabled(["bash", "edit", "read"], [{ permission: "*", pattern: "*", action: "allow" }]).size).toBe(0)
    expect(disabled(["bash", "edit"], [{ permission: "*", pattern: "*", action: "ask" }]).size).toBe(0)
  })

  it("disables nothing for tools no rule mentions", () => {
    expect(disabled(["bash"], [{ permission: "edit", pattern: "*", action: "deny" }]).size).toBe(0)
    expect(disabled(["bash"], []).size).toBe(0)
  })

  it("disables a tool denied outright", () => {
    const result = disabled(
      ["bash", "edit", "read"],
      [
        { permission: "*", pattern: "*", action: "allow" },
        { permission: "bash", pattern: "*", action: "deny" },
      ],
    )
    expect([...result]).toEqual(["bash"])
  })

  it("keeps a tool that is only partly denied", () => {
    expect(
      disabled(
        ["bash"],
        [
          { permission: "bash", pattern: "*", action: "allow" },
          { permission: "bash", pattern: "rm *", action: "deny" },
        ],
      ).has("bash"),
    ).toBe(false)
    expect(
      disabled(
        ["bash"],
        [
          { permission: "bash", pattern: "*", action: "deny" },
          { permission: "bash", pattern: "echo *", action: "allow" },
        ],
      ).has("bash"),
    ).toBe(false)
    expect(
      disabled(
        ["bash"],
        [
          { permission: "bash", pattern: "rm *", action: "deny" },
          { permission: "bash", pattern: "*", action: "allow" },
        ],
      ).has("bash"),
    ).toBe(false)
  })

  it("disables several tools, or all of them through a wildcard", () => {
    const each = disabled(
      ["bash", "edit", "webfetch"],
      [
        { permission: "bash", pattern: "*", action: "deny" },
        { permission: "edit", pattern: "*", action: "deny" },
        { permission: "webfetch", pattern: "*", action: "deny" },
      ],
    )
    expect([...each].sort()).toEqual(["bash", "edit", "webfetch"])
    expect([...disabled(["bash", "edit", "read"], [{ permission: "*", pattern: "*", action: "deny" }])].sort()).toEqual(["bash", "edit", "read"])
  })

  it("lets a specific allow override a wildcard deny", () => {
    const result = disabled(
      ["bash", "edit", "read"],
      [
        { permission: "*", pattern: "*", action: "deny" },
        { permission: "bash", pattern: "*", action: "allow" },
      ],
    )
    expect([...result].sort()).toEqual(["edit", "read"])
  })
})

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
