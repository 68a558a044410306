import type { ElicitRequestFormParams } from "@modelcontextprotocol/sdk/types.js"
import { describe, expect, it } from "vitest"
import { elicit } from "../../src/mcp/elicitation.ts"
import type { Question } from "../../src/question/questions.ts"
import type { ToolContext } from "../../src/tool/tool.ts"

// A server's form, field by field, as questions to the user: formats, bounds, optional fields,
// titled choices and defaults, as third-party servers write them.

/** A call whose user answers from `answers` by the field's title, recording the questions. */
function userAnswering(answers: Record<string, string[]>) {
  const asked: Question[] = []
  const ctx = {
    permit: async () => true,
    questions: {
      inquire: async (_caller: unknown, _key: string, question: Question) => {
        asked.push(question)
        const title = /\*([^*]+)\*/.exec(question.question)![1]!
        return { answer: answers[title]!.shift() ?? "", source: "user" }
      },
    },
  } as unknown as ToolContext
  return { ctx, asked }
}

const form = (properties: Record<string, unknown>, required: string[] = []) =>
  ({ message: "Fill in", requestedSchema: { type: "object", properties, required } }) as unknown as ElicitRequestFormParams

describe("elicitation forms", () => {
  it("checks formats and bounds, asks again with the reason, and accepts a fitting answer", async () => {
    const { ctx, asked } = userAnswering({
      Email: ["not an address", "ada@example.org"],
      Site: ["example", "https://example.org/x"],
      Day: ["31/12/2025", "2025-12-31"],
      When: ["tomorrow", "2025-12-31T10:00:00Z"],
      Count: ["2.5", "12", "7"],
      Ratio: ["0.25"],
    })
    const result = await elicit(
      ctx,
      "srv",
      form(
        {
          email: { type: "string", title: "Email", format: "email" },
          site: { type: "string", title: "Site", format: "uri" },
          day: { type: "string", title: "Day", format: "date" },
          when: { type: "string", title: "When", format: "date-time" },
          count: { type: "integer", title: "Count", minimum: 1, maximum: 10 },
          ratio: { type: "number", title: "Ratio", minimum: 0, maximum: 1 },
        },
        ["email", "site", "day", "when", "count", "ratio"],
      ),
      60_000,
      0,
    )
    expect(result).toEqual({ action: "accept", content: { email: "ada@example.org", site: "https://example.org/x", day: "2025-12-31", when: "2025-12-31T10:00:00Z", count: 7, ratio: 0.25 } })
    expect(asked.filter((q) => q.question.startsWith("That does not fit"))).toHaveLength(6)
  })

  it("cancels after three answers that do not fit", async () => {
    const { ctx } = userAnswering({ Count: ["x", "y", "z"] })
    expect(await elicit(ctx, "srv", form({ count: { type: "integer", title: "Count" } }, ["count"]), 60_000, 0)).toEqual({ action: "cancel" })
  })

  it("offers titled choices (enumNames, oneOf) by title and returns their values; an optional field may be left out, also a choice", async () => {
    const { ctx, asked } = userAnswering({ Size: ["Large"], Plan: ["Free plan"], Note: ["-"], Colour: ["Leave out"], Subscribe: ["Leave out"] })
    const result = await elicit(
      ctx,
      "srv",
      form(
        {
          size: { type: "string", title: "Size", enum: ["s", "l"], enumNames: ["Small", "Large"] },
          plan: { type: "string", title: "Plan", oneOf: [{ const: "free", title: "Free plan" }, { const: "pro", title: "Pro plan" }] },
          note: { type: "string", title: "Note" },
          colour: { type: "string", title: "Colour", enum: ["red", "blue"] },
          subscribe: { type: "boolean", title: "Subscribe", default: true },
        },
        ["size", "plan"],
      ),
      60_000,
      0,
    )
    expect(result).toEqual({ action: "accept", content: { size: "l", plan: "free" } })
    expect(asked[0]!.options).toEqual(["Small", "Large", "Decline"])
    expect(asked[3]!.options).toEqual(["red", "blue", "Leave out", "Decline"])
    expect(asked[4]!.options).toEqual(["Yes (default)", "No", "Leave out", "Decline"])
  })

  it("takes a default's button as that value", async () => {
    const { ctx } = userAnswering({ Subscribe: ["Yes (default)"], Tier: ["gold (default)"] })
    const result = await elicit(
      ctx,
      "srv",
      form({ subscribe: { type: "boolean", title: "Subscribe", default: true }, tier: { type: "string", title: "Tier", enum: ["gold", "silver"], default: "gold" } }, ["subscribe", "tier"]),
      60_000,
      0,
    )
    expect(result).toEqual({ action: "accept", content: { subscribe: true, tier: "gold" } })
  })

  it("asks a choice again when the typed answer is none of its options, and declines on Decline", async () => {
    const { ctx, asked } = userAnswering({ Colour: ["purple", "Blue"] })
    expect(await elicit(ctx, "srv", form({ colour: { type: "string", title: "Colour", enum: ["Red", "Blue"] } }, ["colour"]), 60_000, 0)).toEqual({ action: "accept", content: { colour: "Blue" } })
    expect(asked[1]!.question).toMatch(/^That is not one of the options: pick one of Red, Blue\./)
    const declining = userAnswering({ Colour: ["Decline"] })
    expect(await elicit(declining.ctx, "srv", form({ colour: { type: "string", title: "Colour", enum: ["Red", "Blue"] } }, ["colour"]), 60_000, 0)).toEqual({ action: "decline" })
  })
})
