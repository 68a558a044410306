import pg from "pg"
import type { Logger } from "pino"
import { connectionTag } from "./member-id.ts"

/** The advisory lock whose holder is the leader: a number no other lock of Steward's uses (the
 *  store's schema lock is "steward" in ASCII; this is "leader"). */
const LEADER_LOCK = 0x6c6561646572n
/** The class of the lock each process holds on its own id (two-key advisory locks are a key
 *  space apart from the one-key ones above): held while its connection lives. */
const PROCESS_LOCKS = 0x53747773 // "Stws"

/**
 * One process's line to the cluster's Postgres, apart from the store's: a connection of its own
 * that holds the leader lock (a session advisory lock, so it is released the moment the process
 * or its connection dies) and listens for the cluster's notifications, and a small pool to send
 * them. A notification only wakes someone up: what it is about is always read from the store.
 */
export class ClusterLink {
  private readonly handlers = new Map<string, Array<(payload: string) => void>>()
  private closed = false

  private constructor(
    private readonly client: pg.Client,
    private readonly pool: pg.Pool,
  ) {
    client.on("notification", (message) => {
      for (const handler of this.handlers.get(message.channel) ?? []) {
        try {
          handler(message.payload ?? "")
        } catch {
          // A payload not as expected (another program's NOTIFY on our channel) wakes nothing.
        }
      }
    })
  }

  /** `onLost`: the connection broke — a leader has lost its lock and must stop leading. */
  static async connect(url: string, log: Logger, onLost: (error: Error) => void): Promise<ClusterLink> {
    // Keep-alive: a connection dropped in between (NAT, proxy) is noticed, not held open forever.
    const client = new pg.Client({ connectionString: url, application_name: "steward-cluster", keepAlive: true })
    const pool = new pg.Pool({ connectionString: url, max: 2, application_name: "steward-notify" })
    pool.on("error", (error) => log.warn({ err: error }, "cluster: a notify connection failed"))
    await client.connect()
    const link = new ClusterLink(client, pool)
    client.on("error", (error) => {
      if (!link.closed) onLost(error)
    })
    client.on("end", () => {
      if (!link.closed) onLost(new Error("the cluster connection to Postgres ended"))
    })
    return link
  }

  /** Takes the leader lock if no other process holds it. */
  async tryLead(): Promise<boolean> {
    const { rows } = await this.client.query<{ locked: boolean }>("SELECT pg_try_advisory_lock($1::bigint) AS locked", [LEADER_LOCK.toString()])
    return rows[0]!.locked
  }

  /** Whether this connection still holds the leader lock (a leader checks at every beat). */
  async holdsLead(): Promise<boolean> {
    const { rows } = await this.client.query<{ held: boolean }>(
      "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'advisory' AND objsubid = 1 AND granted AND ((classid::int8 << 32) | objid::int8) = $1::int8) AS held",
      [LEADER_LOCK.toString()],
    )
    return rows[0]!.held
  }

  /** Holds this process's own lock for as long as this connection lives: the moment the process
   *  dies, Postgres drops it, which `connected` sees. */
  async holdProcessLock(id: string): Promise<void> {
    await this.client.query("SELECT pg_advisory_lock($1, hashtext($2))", [PROCESS_LOCKS, id])
  }

  /** Which of these processes are still connected: they hold their lock, or a connection of
   *  their store is still open — a process killed in the middle of a write is dead only once
   *  that write has landed or is gone (member-id.ts), never while it may still change a record
   *  the leader has decided about. */
  async connected(ids: string[]): Promise<Set<string>> {
    const { rows } = await this.pool.query<{ id: string }>(
      `SELECT id FROM unnest($2::text[], $3::text[]) AS p(id, tag) WHERE ((hashtext(id)::int8 & 4294967295)::oid) IN (
         SELECT objid FROM pg_locks WHERE locktype = 'advisory' AND classid = $1 AND objsubid = 2 AND granted
           AND database = (SELECT oid FROM pg_database WHERE datname = current_database()))
         OR tag IN (SELECT application_name FROM pg_stat_activity WHERE datname = current_database())`,
      [PROCESS_LOCKS, ids, ids.map(connectionTag)],
    )
    return new Set(rows.map((row) => row.id))
  }

  /** The ids of a pg-boss queue's jobs taken and not ended (its `job` table in the default
   *  `pgboss` schema; read only — changing them goes through pg-boss). */
  async activeJobs(queue: string): Promise<string[]> {
    const { rows } = await this.pool.query<{ id: string }>("SELECT id FROM pgboss.job WHERE name = $1 AND state = 'active'", [queue])
    return rows.map((row) => row.id)
  }

  async listen(channel: string, handler: (payload: string) => void): Promise<void> {
    const list = this.handlers.get(channel)
    if (list) return void list.push(handler)
    this.handlers.set(channel, [handler])
    await this.client.query(`LISTEN ${pg.escapeIdentifier(channel)}`)
  }

  /** Tells every listening process (this one too); best effort — a lost notification is made up
   *  for by the listeners' own periodic checks. */
  async notify(channel: string, payload = ""): Promise<void> {
    await this.pool.query("SELECT pg_notify($1, $2)", [channel, payload])
  }

  async close(): Promise<void> {
    this.closed = true
    await Promise.allSettled([this.client.end(), this.pool.end()])
  }
}
