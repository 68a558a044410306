import { z } from "zod"
import { defineTool, ToolError } from "./tool.ts"

export const setTimeZoneTool = defineTool({
  id: "set_timezone",
  description:
    'Store the user\'s time zone when they tell you where they are or which zone they want ("I live in Berlin" → "Europe/Berlin"). ' +
    "It is used for the date you see, for schedules without an explicit zone, and for times shown to the user; the user can also type /timezone <zone>. Returns {timeZone}.",
  parameters: z.object({ timeZone: z.string().min(1).describe('IANA time zone name, e.g. "Europe/Berlin", "America/New_York"') }),
  // The zone lasts, and moves every schedule without one of its own.
  guardedWhenTainted: true,
  async execute({ timeZone }, ctx) {
    const set = await ctx.profiles.setTimeZone(ctx.user, timeZone)
    if ("error" in set) throw new ToolError(set.error)
    return set
  },
})
