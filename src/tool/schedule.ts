import { refusal } from "../permission/roles.ts"
import { ScheduleRequest } from "../schedule/request.ts"
import { defineTool, ToolError } from "./tool.ts"

const DESCRIPTION = `Create a durable schedule; returns {taskId} (cancel it with cancel_task, see it with list_tasks scope "triggers"). Each run is a Worker task with prompt (and timeout); its report goes to this conversation, or to target.
- "recurring": every interval seconds (at least 60), or by cron (5 or 6 fields as in crontab, L/W/# and @daily-style nicknames allowed, e.g. "0 9 * * 1-5") read in timezone (IANA, e.g. "Europe/Berlin"; default: the user's time zone). A run never starts while the previous one is still running (that due time is skipped).
- "scheduled": once, at runAt (ISO 8601 with offset, e.g. "2026-03-01T09:00:00+01:00"; in the future, at most a year ahead).
- "conditional": each time condition becomes true, then waits cooldown seconds. Condition: {kind:"task", taskId, status?: "completed"|"failed"|"any"}, {kind:"time", at}, {kind:"event", name} (raised by the owner or a webhook), {kind:"all"|"any", of:[...]}.
A due time missed while Steward was down runs once if at most maxLateness seconds late (default 3600) unless onMissed is "skip".
quiet: true for checks that should speak only when something is found: a run answering exactly NO_REPORT posts nothing.
triggerId: the id (or a unique prefix) of an existing schedule of this conversation; the request (complete: type, prompt, cadence) replaces its definition in place, keeping its id and history.`

/** Planner only: the role table (src/permission/roles.ts) withholds it from the other roles and
 *  refuses their calls. */
export const scheduleTool = defineTool({
  id: "schedule",
  description: DESCRIPTION,
  parameters: ScheduleRequest,
  guardedWhenTainted: true,
  async execute(args, ctx) {
    const refused = refusal(ctx.role, "schedule")
    if (refused) throw new ToolError(refused)
    return ctx.schedules.schedule(ctx, args)
  },
})
