import { decodeTime } from "ulid"
import type { Store } from "../store/store.ts"
import { EVENT_NAME } from "./condition.ts"
import type { RaisedRecord } from "./records.ts"

/** Another process's clock (the CLI's) may run behind ours: its ids can sort just before the
 *  newest id already seen. The poll looks back this far and skips the ids it knows. */
const CLOCK_SLACK_MS = 10_000

/** Records an event; the CLI calls this on the same SQLite file from its own process. */
export async function raiseEvent(store: Store, name: string): Promise<RaisedRecord> {
  if (!EVENT_NAME.test(name)) throw new Error(`bad event name "${name}": 1-64 letters, digits, _ . -`)
  return store.schedules.raise(name)
}

/**
 * The events raised so far, as conditions ask about them: only the latest time of each name
 * matters (`raised at or after since`), so that is all that is kept in memory — and all that
 * start-up reads (the store keeps the latest raising per name).
 */
export class RaisedEvents {
  private latest = new Map<string, number>()
  /** Ids taken within CLOCK_SLACK_MS of the newest, so the look-back does not take them twice. */
  private recent = new Set<string>()
  private newest = 0

  constructor(private readonly store: Store) {}

  async load(): Promise<void> {
    for (const record of await this.store.schedules.raisedNames()) this.take(record)
    // Raisings in the look-back window are known now; a poll must not count them as new.
    for (const record of await this.store.schedules.raisedSince(Math.max(0, this.newest - CLOCK_SLACK_MS))) this.take(record)
  }

  async raise(name: string): Promise<void> {
    this.take(await raiseEvent(this.store, name))
  }

  /** Takes events other processes wrote since the last look; true when there were any. */
  async poll(): Promise<boolean> {
    const fresh = (await this.store.schedules.raisedSince(Math.max(0, this.newest - CLOCK_SLACK_MS))).filter((record) => !this.recent.has(record.id))
    for (const record of fresh) this.take(record)
    return fresh.length > 0
  }

  raisedSince(name: string, since: string): boolean {
    return (this.latest.get(name) ?? -Infinity) >= Date.parse(since)
  }

  private take(record: RaisedRecord): void {
    const at = Date.parse(record.at)
    this.latest.set(record.name, Math.max(at, this.latest.get(record.name) ?? -Infinity))
    this.newest = Math.max(this.newest, decodeTime(record.id))
    this.recent.add(record.id)
    for (const id of this.recent) if (decodeTime(id) < this.newest - CLOCK_SLACK_MS) this.recent.delete(id)
  }
}
