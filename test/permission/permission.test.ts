import { describe, expect, it } from "vitest"
import { disabled, evaluate, match, merge, type Ruleset } from "../../src/permission/permission.ts"

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
