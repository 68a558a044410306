import { describe, expect, it } from "vitest"
import { z } from "zod"
import { runLoop } from "../../src/agent/loop.ts"
import type { Ruleset } from "../../src/permission/permission.ts"
import type { QuestionCapability } from "../../src/tool/capabilities.ts"
import { defineTool, type ToolContext } from "../../src/tool/tool.ts"
import { sequence } from "../support/mock-model.ts"
import { allowAll, call, setup, text, user } from "./loop-setup.ts"

describe("runLoop", { timeout: 5_000 }, () => {
  describe("permissions at run time", () => {
    function fetchTool(fetched: string[]) {
      return defineTool({
        id: "fetch_url",
        description: "Pretends to fetch a URL (never touches the network).",
        parameters: z.object({ url: z.string() }),
        pattern: (args) => args.url,
        execute: async ({ url }) => {
          fetched.push(url)
          return "page"
        },
      })
    }

    it("denies a call whose pattern a deny rule matches, and allows others", async () => {
      const fetched: string[] = []
      const rules: Ruleset = [...allowAll, { permission: "fetch_url", pattern: "https://evil.example/*", action: "deny" }]
      const { model, input, log } = setup(
        sequence(call("fetch_url", { url: "https://evil.example/steal" }), call("fetch_url", { url: "https://good.example/page" }), text("done")),
        [fetchTool(fetched)],
        { rules },
      )
      await log.append({ message: user("hi") })
      await expect(runLoop(input)).resolves.toEqual({ status: "done", text: "done" })
      expect(fetched).toEqual(["https://good.example/page"])
      expect(model.calls[1]!.lastToolResults[0]).toMatchObject({ isError: true })
      expect(model.calls[1]!.lastToolResults[0]!.output).toMatch(/Permission denied.*evil\.example/)
      expect(model.calls[2]!.lastToolResults[0]).toMatchObject({ isError: false })
    })

    it("asks the user when a rule says ask: runs the call when allowed, refuses it when denied", async () => {
      const fetched: string[] = []
      const asked: Array<{ tool: string; pattern: string; callId: string }> = []
      const rules: Ruleset = [...allowAll, { permission: "fetch_url", pattern: "*", action: "ask" }]
      const { model, input, log } = setup(sequence(call("fetch_url", { url: "https://good.example/" }), call("fetch_url", { url: "https://bad.example/" }), text("done")), [fetchTool(fetched)], { rules })
      input.context.questions = {
        approve: async (ctx: ToolContext, tool: string, pattern: string) => {
          asked.push({ tool, pattern, callId: ctx.callId })
          return pattern.includes("good")
        },
      } as unknown as QuestionCapability
      await log.append({ message: user("hi") })
      await runLoop(input)
      expect(asked.map((a) => a.pattern)).toEqual(["https://good.example/", "https://bad.example/"])
      expect(fetched).toEqual(["https://good.example/"])
      expect(model.calls[1]!.lastToolResults[0]).toMatchObject({ isError: false })
      expect(model.calls[2]!.lastToolResults[0]).toMatchObject({ isError: true })
      expect(model.calls[2]!.lastToolResults[0]!.output).toMatch(/^Permission denied by the user/)
    })
  })
})
