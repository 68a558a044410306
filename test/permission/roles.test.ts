import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { delegateTarget, mayReportTo, refusal, withheldTools } from "../../src/permission/roles.ts"
import { createDelegateTool } from "../../src/tool/delegate.ts"
import { askUserTool } from "../../src/tool/ask-user.ts"
import type { ToolContext } from "../../src/tool/tool.ts"
import { byRole, type ChatRequest } from "../fakes/model-server.ts"
import { startHarness, type Harness } from "../support/harness.ts"

describe("the role table", () => {
  it("says whom each role hands work to: the Teller the Planner, the Planner workers, a Worker nobody", () => {
    expect(delegateTarget("teller")).toBe("planner")
    expect(delegateTarget("planner")).toBe("worker")
    expect(delegateTarget("worker")).toBeUndefined()
  })

  it("gives each right to its role only, and a refusal the model can act on to the others", () => {
    expect(refusal("teller", "ask_user")).toBeUndefined()
    expect(refusal("planner", "ask_user")).toBe("Only the Teller asks the user.")
    expect(refusal("planner", "schedule")).toBeUndefined()
    expect(refusal("teller", "schedule")).toMatch(/^Only the Planner creates schedules/)
    expect(refusal("planner", "shape_tasks")).toBeUndefined()
    expect(refusal("teller", "shape_tasks", "priority")).toMatch(/^Only the Planner may set priority;/)
    expect(refusal("worker", "delegate")).toMatch(/^Workers cannot delegate/)
  })

  it("withholds the tools of the rights a role lacks", () => {
    expect(withheldTools("teller").sort()).toEqual(["schedule"])
    expect(withheldTools("planner").sort()).toEqual(["ask_user"])
    expect(withheldTools("worker").sort()).toEqual(["ask_user", "delegate", "schedule"])
  })

  it("lets an owner report anywhere, anyone else only to a conversation of their own", () => {
    expect(mayReportTo({ id: "test:u1", owner: true }, undefined)).toBe(true)
    expect(mayReportTo({ id: "test:u1", owner: false }, "test:u1")).toBe(true)
    expect(mayReportTo({ id: "test:u1", owner: false }, "test:u2")).toBe(false)
    expect(mayReportTo({ id: "test:u1", owner: false }, undefined)).toBe(false)
  })
})

describe("tools ask the role table", () => {
  const caller = (role: ToolContext["role"]) => ({ role, agent: role, conversation: "c1", user: "u1", sessionId: "s1", callId: "call1", abort: new AbortController().signal }) as ToolContext

  it("ask_user refuses every role but the Teller", async () => {
    await expect(askUserTool.execute({ question: "ok?" }, caller("planner"))).rejects.toThrow("Only the Teller asks the user.")
  })

  it("delegate refuses a Worker before anything else, and the Planner-only fields to the Teller", async () => {
    const delegate = createDelegateTool([{ name: "default", description: "does things" }])
    await expect(delegate.execute({ prompt: "nested", priority: 9 }, caller("worker"))).rejects.toThrow(/^Workers cannot delegate/)
    await expect(delegate.execute({ prompt: "p", priority: 9, worker: "default" }, caller("teller"))).rejects.toThrow("Only the Planner may set priority, worker;")
    expect(delegate.pattern!({ prompt: "p" }, "teller")).toBe("planner")
    expect(delegate.pattern!({ prompt: "p", worker: "default" }, "planner")).toBe("default")
  })
})

describe("the runner offers no tool of a right the role lacks", () => {
  let harness: Harness | undefined
  afterEach(async () => {
    await harness?.close()
    harness = undefined
  })

  it("even when a permissions file allows every role everything", async () => {
    const permissions = join(mkdtempSync(join(tmpdir(), "steward-perm-")), "permissions.json")
    const everything = [{ permission: "*", pattern: "*", action: "allow" }]
    writeFileSync(permissions, JSON.stringify({ teller: everything, planner: everything, worker: everything }))
    const afterTool = (req: ChatRequest) => req.messages.at(-1)?.role === "tool"
    harness = await startHarness(
      byRole({
        teller: (req) => (afterTool(req) || req.lastUserText.includes("<task-results>") ? { text: "done" } : { toolCalls: [{ name: "delegate", args: { prompt: "plan" } }] }),
        planner: (req) => (afterTool(req) ? { text: "ok" } : { toolCalls: [{ name: "delegate", args: { prompt: "work" } }] }),
        worker: () => ({ text: "worked" }),
      }),
      { PERMISSIONS_FILE: permissions },
    )
    await harness.channel.say("go")
    await harness.channel.waitForSent(1)
    await harness.app.supervisor.idle()
    const offered = (role: string) => (harness!.server.requests.find((r) => r.role === role)!.body.tools ?? []).map((t) => t.function?.name)
    expect(offered("teller")).toContain("reply")
    expect(offered("teller")).not.toContain("schedule")
    expect(offered("planner")).toContain("schedule")
    expect(offered("planner")).not.toContain("ask_user")
    expect(offered("worker")).toContain("write_file")
    expect(offered("worker")).not.toContain("delegate")
    expect(offered("worker")).not.toContain("ask_user")
    expect(offered("worker")).not.toContain("schedule")
  })
})
