import type { TaskRecord } from "../../src/core/types.ts"

/** A worker task of conversation `telegram:1001`, ended unless `extra` says otherwise. */
export const taskRecord = (id: string, extra: Partial<TaskRecord> = {}): TaskRecord => ({
  id,
  role: "worker",
  agent: "general",
  type: "oneshot",
  prompt: id,
  priority: 5,
  timeout: null,
  status: "completed",
  conversation: "telegram:1001",
  user: "telegram:1001",
  parentSessionId: "S",
  sessionId: `S-${id}`,
  origin: `S:${id}`,
  attempts: 1,
  createdAt: "2026-01-01T00:00:00.000Z",
  endedAt: "2026-01-01T00:01:00.000Z",
  ...extra,
})
