import type { LogEntry, SessionLog } from "../agent/session-log.ts"
import type { MessageRecord, SessionRecord } from "../store/records.ts"
import { newId } from "../store/ids.ts"
import type { Store } from "../store/store.ts"

/** A session's messages in memory, appended only after they are on disk. */
export class Session implements SessionLog {
  constructor(
    readonly info: SessionRecord,
    readonly records: MessageRecord[],
    private readonly store: Store,
  ) {}

  async append(...entries: LogEntry[]): Promise<void> {
    const createdAt = new Date().toISOString()
    const records = entries.map((entry) => ({ id: newId(), sessionId: this.info.id, createdAt, ...entry }))
    await this.store.save({ messages: records })
    this.records.push(...records)
  }

  has(eventId: string): boolean {
    return this.records.some((record) => record.eventId === eventId)
  }
}

/** Idle sessions kept in memory; beyond this the least recently used are read again when needed. */
const IDLE_SESSIONS = 256

/**
 * Loads each session once; the Supervisor is the only writer, so the copy stays current. A
 * session in use (opened and not yet released or forgotten) stays in memory; the idle ones are
 * kept up to a bound, least recently used first out, so memory does not grow with every
 * conversation ever held.
 */
export class Sessions {
  /** In least-recently-used order, oldest first. */
  private cache = new Map<string, Promise<Session>>()
  /** Sessions in use, with how many users each has: never evicted. */
  private pins = new Map<string, number>()

  constructor(
    private readonly store: Store,
    private readonly idleLimit = IDLE_SESSIONS,
  ) {}

  /** The session with this id, created from `info` if it does not exist yet; in use until
   *  `release`d (or `forget`ten). */
  open(info: SessionRecord): Promise<Session> {
    let session = this.cache.get(info.id)
    if (session) this.cache.delete(info.id)
    else {
      session = this.load(info)
      session.catch(() => {
        if (this.cache.get(info.id) === session) this.cache.delete(info.id)
      })
    }
    this.cache.set(info.id, session)
    this.pins.set(info.id, (this.pins.get(info.id) ?? 0) + 1)
    return session
  }

  /** The caller is done with the session for now: it may be evicted once idle long enough. */
  release(id: string): void {
    const pins = (this.pins.get(id) ?? 1) - 1
    if (pins > 0) this.pins.set(id, pins)
    else this.pins.delete(id)
    this.evict()
  }

  /** A session whose record the caller writes in its own save (with the task or conversation
   *  that introduces it): nothing to read, nothing more to write. */
  adopt(info: SessionRecord): void {
    this.cache.delete(info.id)
    this.cache.set(info.id, Promise.resolve(new Session(info, [], this.store)))
    this.evict()
  }

  async exists(id: string): Promise<SessionRecord | undefined> {
    return (await this.cache.get(id))?.info ?? (await this.store.session(id))
  }

  forget(id: string): void {
    this.cache.delete(id)
    this.pins.delete(id)
  }

  /** Sessions in memory (for tests and the soak benchmark). */
  get size(): number {
    return this.cache.size
  }

  private evict(): void {
    if (this.cache.size <= this.idleLimit + this.pins.size) return
    for (const id of this.cache.keys()) {
      if (this.cache.size <= this.idleLimit + this.pins.size) return
      if (!this.pins.has(id)) this.cache.delete(id)
    }
  }

  private async load(info: SessionRecord): Promise<Session> {
    const stored = await this.store.session(info.id)
    if (!stored) await this.store.save({ sessions: [info] })
    return new Session(stored ?? info, stored ? await this.store.messages(info.id) : [], this.store)
  }
}
