import { z } from "zod"
import { refusal } from "../permission/roles.ts"
import { defineTool, ToolError } from "./tool.ts"

const DESCRIPTION = `Ask the user a question and end your turn at once. Their answer — a button press, typed text, or on timeout the default — comes back as this call's result {answer, source}: source "user", "default" (no answer in time; default used) or "timeout" (no answer, no default; answer is "").
Give options for a choice (shown as buttons; at most 10, each at most 75 characters). Only one question is open per conversation: asking again replaces the open one.`

const parameters = z
  .object({
    question: z.string().trim().min(1).max(2000),
    timeout: z.number().int().min(1).max(7 * 86_400).optional().describe("Seconds until the default is used (default 3600)"),
    default: z.string().trim().min(1).max(200).optional().describe("Answer used when the user does not answer in time; one of options if given"),
    options: z.array(z.string().trim().min(1).max(75)).min(1).max(10).optional(),
  })
  .refine((args) => !args.options || new Set(args.options.map((o) => o.toLowerCase())).size === args.options.length, { message: "options must be different from each other", path: ["options"] })
  .refine((args) => !args.options || args.default === undefined || args.options.some((o) => o.toLowerCase() === args.default!.toLowerCase()), {
    message: "default must be one of options",
    path: ["default"],
  })

export const askUserTool = defineTool({
  id: "ask_user",
  description: DESCRIPTION,
  parameters,
  async execute(args, ctx) {
    const refused = refusal(ctx.role, "ask_user")
    if (refused) throw new ToolError(refused)
    // The option's own spelling, so the answer matches what the buttons show.
    const fallback = args.default === undefined ? undefined : (args.options?.find((o) => o.toLowerCase() === args.default!.toLowerCase()) ?? args.default)
    return ctx.questions.ask(ctx, { question: args.question, options: args.options, default: fallback, timeout: args.timeout ?? 3600 })
  },
})
