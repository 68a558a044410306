import type { SessionLog } from "../agent/loop.ts"
import type { MessageRecord, SessionRecord } from "../store/records.ts"
import { newId, type Store } from "../store/store.ts"

/** A session's messages in memory, appended only after they are on disk. */
export class Session implements SessionLog {
  constructor(
    readonly info: SessionRecord,
    readonly records: MessageRecord[],
    private readonly store: Store,
  ) {}

  async append(...entries: Array<Pick<MessageRecord, "message"> & Partial<Pick<MessageRecord, "kind" | "usage" | "eventId">>>): Promise<void> {
    const createdAt = new Date().toISOString()
    const records = entries.map((entry) => ({ id: newId(), sessionId: this.info.id, createdAt, ...entry }))
    await this.store.save({ messages: records })
    this.records.push(...records)
  }

  has(eventId: string): boolean {
    return this.records.some((record) => record.eventId === eventId)
  }
}

/** Loads each session once; the Supervisor is the only writer, so the copy stays current. */
export class Sessions {
  private cache = new Map<string, Promise<Session>>()

  constructor(private readonly store: Store) {}

  /** The session with this id, created from `info` if it does not exist yet. */
  open(info: SessionRecord): Promise<Session> {
    let session = this.cache.get(info.id)
    if (!session) {
      session = this.load(info)
      this.cache.set(info.id, session)
      session.catch(() => this.cache.delete(info.id))
    }
    return session
  }

  /** A session whose record the caller writes in its own save (with the task or conversation
   *  that introduces it): nothing to read, nothing more to write. */
  adopt(info: SessionRecord): void {
    this.cache.set(info.id, Promise.resolve(new Session(info, [], this.store)))
  }

  async exists(id: string): Promise<SessionRecord | undefined> {
    return (await this.cache.get(id))?.info ?? (await this.store.session(id))
  }

  forget(id: string): void {
    this.cache.delete(id)
  }

  private async load(info: SessionRecord): Promise<Session> {
    const stored = await this.store.session(info.id)
    if (!stored) await this.store.save({ sessions: [info] })
    return new Session(stored ?? info, stored ? await this.store.messages(info.id) : [], this.store)
  }
}
