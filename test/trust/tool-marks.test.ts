import { mkdtemp, mkdir, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import path from "node:path"
import { describe, expect, it } from "vitest"
import type { Capabilities } from "../../src/tool/capabilities.ts"
import { allTools } from "../../src/tool/registry.ts"
import type { ToolContext } from "../../src/tool/tool.ts"
import { userWorkspaceDir } from "../../src/tool/workspace.ts"
import { createWriteFileTool } from "../../src/tool/write-file.ts"
import { allowHostsSchema } from "../../src/web/address-policy.ts"

/**
 * Each built-in tool says what it is to the rules on untrusted content: whether its answer is
 * outside content (the loop envelopes it, which taints the run) and whether a tainted run needs
 * the user for it (it moves data out or changes what lasts). A tool added later must be placed.
 */
describe("the built-in tools' trust marks", () => {
  const tools = allTools([], {
    fetch: { maxBytes: 1, allowHosts: allowHostsSchema.parse("") },
    workspace: { quotaBytes: 1 },
    search: { name: "fake", search: async () => [] },
    resources: { read: async () => null },
  })
  const ids = (pick: (tool: (typeof tools)[number]) => unknown) => tools.filter(pick).map((tool) => tool.id).sort()

  it("outside content: pages, search results, files, MCP resources, memory notes a model wrote", () => {
    expect(ids((tool) => tool.untrustedOutput)).toEqual(["fetch_url", "read_file", "read_resource", "search_memory", "web_search"])
  })

  it("asked for in a tainted run: what sends, remembers, schedules, cancels, re-zones or overwrites", () => {
    expect(ids((tool) => tool.guardedWhenTainted)).toEqual(["cancel_task", "fetch_url", "forget", "remember", "schedule", "send_file", "set_timezone", "write_file"])
  })

  it("write_file asks only to replace or extend a file that exists, not to make a new one", async () => {
    const root = await mkdtemp(path.join(tmpdir(), "steward-marks-"))
    const ctx = { role: "worker", agent: "default", conversation: "c", user: "u1", sessionId: "s", callId: "k", abort: new AbortController().signal, ...({ workspaceDir: root } as Capabilities) } as ToolContext
    const own = userWorkspaceDir(root, "u1")
    await mkdir(own, { recursive: true })
    await writeFile(path.join(own, "thesis.md"), "years of work")
    const guard = createWriteFileTool({ quotaBytes: 1024 }).guardedWhenTainted as (args: { path: string; content: string }, ctx: ToolContext) => Promise<boolean>
    expect(await guard({ path: "thesis.md", content: "" }, ctx)).toBe(true)
    expect(await guard({ path: "summary.md", content: "" }, ctx)).toBe(false)
    expect(await guard({ path: "new/folder/summary.md", content: "" }, ctx)).toBe(false)
  })
})
