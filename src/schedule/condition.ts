import { z } from "zod"

/**
 * When a conditional task may run. The seed leaves it open; Steward makes it a small
 * algebra: another task's outcome, a point in time, a named event, and all/any of those.
 */
export type Condition =
  | { kind: "task"; taskId: string; status?: "completed" | "failed" | "any" }
  | { kind: "time"; at: string }
  | { kind: "event"; name: string }
  | { kind: "all" | "any"; of: Condition[] }

export const Condition: z.ZodType<Condition> = z.lazy(() =>
  z.discriminatedUnion("kind", [
    z.object({ kind: z.literal("task"), taskId: z.string().min(1), status: z.enum(["completed", "failed", "any"]).optional() }),
    z.object({ kind: z.literal("time"), at: z.iso.datetime({ offset: true }) }),
    z.object({ kind: z.literal("event"), name: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, "letters, digits, _ . - (at most 64)") }),
    z.object({ kind: z.enum(["all", "any"]), of: z.array(Condition).min(1).max(16) }),
  ]),
)
