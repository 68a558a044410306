import type { Logger } from "pino"
import type { Access } from "../access/access.ts"
import { channelOf } from "../channel/channel.ts"
import type { Outbox } from "../channel/outbox.ts"
import type { Quotas } from "../config/quotas.ts"
import type { ConversationId, TriggerRecord, UserId } from "../core/types.ts"
import { mayReportTo } from "../permission/roles.ts"
import { scheduleRefusal } from "../quota/schedule-quota.ts"
import type { ScheduleRequest } from "../schedule/request.ts"
import type { Scheduler } from "../schedule/scheduler.ts"
import type { OutboxRecord } from "../store/records.ts"
import { newId } from "../store/ids.ts"
import type { Caller, ScheduleCapability } from "../tool/capabilities.ts"
import { ToolError } from "../tool/tool.ts"
import { resolveId } from "./id-prefix.ts"

export interface SchedulesDeps {
  scheduler: Scheduler
  outbox: Outbox
  access: Access
  /** Whose conversation this is, if Steward has one with that id. */
  userOf: (conversation: ConversationId) => Promise<UserId | undefined>
  /** The user's IANA zone: a cron expression without its own zone is read in it. */
  timeZoneOf: (user: UserId) => string
  /** Limits for users who are not owners (QUOTA_SCHEDULES, QUOTA_MIN_INTERVAL_SECONDS). */
  quotas: Quotas
  log: Logger
}

/**
 * Schedules as the rest of Steward meets them: the `schedule` tool's checks before the
 * Scheduler creates a trigger, what the owner of a trigger is told, and the delivery of each
 * scheduled report recorded on its firing.
 */
export class Schedules implements ScheduleCapability {
  constructor(private readonly deps: SchedulesDeps) {}

  /** Creates a trigger, or with `triggerId` (an id or a unique prefix) redefines one of this
   *  conversation in place. A cron expression without a zone is read in the user's zone, which
   *  is fixed on the trigger when it is made. */
  async schedule(caller: Caller, request: ScheduleRequest): Promise<{ taskId: string }> {
    if (request.target !== undefined) await this.checkTarget(request.target, caller.user)
    const { scheduler } = this.deps
    const zoned = request.cron !== undefined && request.timezone === undefined ? { ...request, timezone: this.deps.timeZoneOf(caller.user) } : request
    const origin = `${caller.sessionId}:${caller.callId}`
    if (zoned.triggerId === undefined) {
      // A call replayed after a crash finds the trigger it made: that one is not counted again.
      await this.checkQuota(caller.user, zoned, await scheduler.createdBy(origin))
      return scheduler.create(zoned, { conversation: caller.conversation, user: caller.user, origin, askedAt: caller.askedAt })
    }
    // Only the caller's own: a trigger runs as its user, so redefining another person's would act as them.
    const resolved = resolveId(zoned.triggerId, scheduler.list(caller.conversation).filter((trigger) => trigger.user === caller.user).map((trigger) => trigger.id), "schedule")
    if ("error" in resolved) throw new ToolError(`triggerId: ${resolved.error}`)
    await this.checkQuota(caller.user, zoned, resolved.id)
    const edited = await scheduler.editTrigger(resolved.id, zoned, caller.conversation)
    if (typeof edited === "string") throw new ToolError(edited)
    return { taskId: edited.id }
  }

  /** Something the trigger's owner must hear that no run will report (the Scheduler's host). */
  async notify(trigger: TriggerRecord, text: string): Promise<void> {
    await this.deps.outbox.add(trigger.conversation, text, `notice:${trigger.id}:${newId()}`, {}, undefined, true)
  }

  /** Records a scheduled report's delivery on its firing; a report given up is also told to the
   *  trigger's owner, so no schedule fails silently. */
  async settled(record: OutboxRecord): Promise<void> {
    if (!record.firingId) return
    const { scheduler, outbox } = this.deps
    try {
      if (record.status === "delivered") return await scheduler.delivered(record.firingId, record.messageId!)
      await scheduler.deliveryFailed(record.firingId, record.error ?? "not delivered")
      const triggerId = record.firingId.split("/")[0]!
      const owner = await scheduler.owner(triggerId)
      if (owner && owner !== record.conversation) {
        // The platform's refusal is in the log under the outbox record's id.
        await outbox.add(owner, `A scheduled report could not be delivered to ${record.conversation} (reference ${record.id}).`, `undelivered:${record.id}`)
      }
    } catch (error) {
      this.deps.log.error({ err: error, firing: record.firingId }, "could not record a report's delivery")
    }
  }

  /** A user who is not an owner keeps to QUOTA_SCHEDULES and QUOTA_MIN_INTERVAL_SECONDS. */
  private async checkQuota(user: UserId, request: ScheduleRequest, replacing: string | undefined): Promise<void> {
    if (this.deps.access.isOwner(user)) return
    const refusal = scheduleRefusal(this.deps.quotas, request, this.deps.scheduler.inForce(user), replacing)
    if (refusal) throw new ToolError(refusal)
  }

  /** A report target must be a conversation of a channel that runs here, and one the user may
   *  post to (the role table's mayReportTo). */
  private async checkTarget(target: ConversationId, user: UserId): Promise<void> {
    const channels = this.deps.outbox.channelNames()
    if (!/^[a-z]+:\S+$/.test(target) || !channels.includes(channelOf(target))) {
      throw new ToolError(`target "${target}" is not a conversation of a running channel: expected <channel>:<id> with channel one of ${channels.join(", ")}`)
    }
    const owner = this.deps.access.isOwner(user)
    if (!mayReportTo({ id: user, owner }, owner ? undefined : await this.deps.userOf(target))) {
      throw new ToolError(`target "${target}" is not a conversation of yours; reports can go to this conversation or another of your own`)
    }
  }
}
