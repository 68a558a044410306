import path from "node:path"
import { uploadsOn } from "../attachments/inbox.ts"
import type { Quotas } from "../config/quotas.ts"
import type { TriggerRecord, UserId } from "../core/types.ts"
import { memoryFolder } from "../memory/slug.ts"
import { userWorkspaceDir } from "../tool/workspace.ts"
import type { UsageSample } from "../usage/usage.ts"
import { notesOn } from "./note-quota.ts"
import { tokensByUser } from "./quota-guard.ts"

/** One user's use today against their quotas, for `steward usage`. */
export interface QuotaUse {
  user: UserId
  owner: boolean
  tokensToday: number
  recurringSchedules: number
  notesToday: number
  uploadsToday: number
}

export interface QuotaUseSources {
  dataDir: string
  memoryScope: "user" | "shared"
  /** The day's usage samples (UTC). */
  samplesToday: UsageSample[]
  triggers: TriggerRecord[]
  isOwner: (user: UserId) => boolean
  now: Date
}

/** Every user who used a model today or has a schedule in force, with their use of each quota. */
export async function quotaUse(sources: QuotaUseSources): Promise<QuotaUse[]> {
  const tokens = tokensByUser(sources.samplesToday)
  const inForce = sources.triggers.filter((trigger) => trigger.status === "active" || trigger.status === "paused")
  const users = [...new Set([...tokens.keys(), ...inForce.map((trigger) => trigger.user)])].sort()
  return Promise.all(
    users.map(async (user) => ({
      user,
      owner: sources.isOwner(user),
      tokensToday: tokens.get(user) ?? 0,
      recurringSchedules: inForce.filter((trigger) => trigger.user === user && trigger.kind === "recurring").length,
      notesToday: await notesOn(memoryFolder(path.join(sources.dataDir, "memory"), sources.memoryScope, user), sources.now),
      uploadsToday: await uploadsOn(userWorkspaceDir(path.join(sources.dataDir, "workspace"), user), sources.now),
    })),
  )
}

/** A use against its limit as `steward usage` shows it: the owner's is not limited. */
export function againstLimit(used: number, limit: number, owner: boolean): string {
  return owner ? `${used}` : `${used}/${limit}`
}

/** The limits themselves, named by their variables. */
export function quotaLimits(quotas: Quotas): Record<string, number> {
  return {
    QUOTA_SCHEDULES: quotas.schedules,
    QUOTA_MIN_INTERVAL_SECONDS: quotas.minIntervalSeconds,
    QUOTA_MEMORY_NOTE_CHARS: quotas.memoryNoteChars,
    QUOTA_MEMORY_NOTES_PER_DAY: quotas.memoryNotesPerDay,
    QUOTA_UPLOADS_PER_DAY: quotas.uploadsPerDay,
    QUOTA_TOKENS_PER_DAY: quotas.tokensPerDay,
    QUOTA_MESSAGES_PER_MINUTE: quotas.messagesPerMinute,
  }
}
