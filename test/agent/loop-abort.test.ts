import { describe, expect, it } from "vitest"
import { z } from "zod"
import { runLoop } from "../../src/agent/loop.ts"
import { defineTool } from "../../src/tool/tool.ts"
import { sequence } from "../support/mock-model.ts"
import { call, echoTool, results, setup, text, user } from "./loop-setup.ts"

describe("runLoop", { timeout: 5_000 }, () => {
  describe("abort", () => {
    it("rejects when aborted during a model call and makes no further call", async () => {
      let abort!: AbortController
      const { model, input, log, abort: controller } = setup(() => {
        queueMicrotask(() => abort.abort(new Error("run cancelled")))
        return { hang: true }
      }, [echoTool()])
      abort = controller
      await log.append({ message: user("hi") })
      await expect(runLoop(input)).rejects.toThrow()
      expect(model.calls).toHaveLength(1)
      expect(log.roles()).toEqual(["user"])
    })

    it("rejects when aborted during a tool and makes no further model call", async () => {
      let abort!: AbortController
      const slow = defineTool({
        id: "slow",
        description: "Gets cancelled.",
        parameters: z.object({}),
        execute: async (_args, ctx) => {
          abort.abort(new Error("run cancelled"))
          ctx.abort.throwIfAborted()
          return "unreachable"
        },
      })
      const { model, input, log, abort: controller } = setup(sequence(call("slow", {}), text("never")), [slow])
      abort = controller
      await log.append({ message: user("hi") })
      await expect(runLoop(input)).rejects.toThrow(/run cancelled/)
      expect(model.calls).toHaveLength(1)
      expect(results(log)).toEqual([])
    })

    it("does not call the model when already aborted", async () => {
      const { model, input, log, abort } = setup(sequence(text("never")), [echoTool()])
      await log.append({ message: user("hi") })
      abort.abort(new Error("stopped"))
      await expect(runLoop(input)).rejects.toThrow(/stopped/)
      expect(model.calls).toHaveLength(0)
    })
  })
})
