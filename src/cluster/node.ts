import type PgBoss from "pg-boss"
import { join } from "node:path"
import type { Logger } from "pino"
import type { Config } from "../config/config.ts"
import { errorText } from "../core/errors.ts"
import type { InboundMessage, InboundOutcome } from "../core/types.ts"
import type { Store } from "../store/store.ts"
import type { Supervisor } from "../supervisor/supervisor.ts"
import { LeaderCalls } from "./leader-calls.ts"
import { ClusterLink } from "./link.ts"
import { Membership } from "./membership.ts"
import { Claimer, startBoss, TASK_QUEUES, type TaskJob } from "./queues.ts"
import { RemoteRuns } from "./remote-runs.ts"
import { leaderHandlers, packInbound, routedCapabilities } from "./routed.ts"
import { CANCEL_CHANNEL, TaskHost } from "./task-host.ts"

const WORK_CHANNEL = "steward_work"

export interface LeaderHooks {
  beforeLeading: () => Promise<void>
  onLeader: () => Promise<void>
}
/** How long a process that does not lead waits for the leader's word on a message it took in
 *  (a notice for the sender) before it lets the platform go: the message is queued either way. */
const INBOUND_WAIT_MS = 2000

/**
 * This process as one of several on one Postgres (STORE_URL). Every process claims Planner and
 * Worker tasks from pg-boss (WORKER_CONCURRENCY of each) and takes in what reaches it (Slack
 * events, webhooks, hooks); the one holding the leader lock also runs the Supervisor — Teller
 * turns, the task board, schedules, questions, the outbox — and the channels only one process
 * may run (Telegram's polling). A process that does not lead reaches the Supervisor's parts
 * through leader calls. See ARCHITECTURE.md, "Several processes".
 */
export class ClusterNode {
  private supervisor: Supervisor | undefined
  private host: TaskHost | undefined
  private claimers: Array<Claimer<TaskJob>> = []
  /** This process leads and its Supervisor has started: the leader's parts are used here. */
  private ready = false
  private stopping = false

  private constructor(
    private readonly config: Config,
    private readonly store: Store,
    private readonly log: Logger,
    private readonly link: ClusterLink,
    private readonly boss: PgBoss,
    readonly membership: Membership,
    private readonly calls: LeaderCalls,
    private readonly remote: RemoteRuns,
    /** The process must end: it lost the leader lock, or could not take up leading. */
    private readonly onFatal: (error: Error) => void,
  ) {}

  /** `id`: this process's (newMemberId), the one its store's connections are tagged with. */
  static async join(config: Config, store: Store, url: string, id: string, log: Logger, onFatal: (error: Error) => void): Promise<ClusterNode> {
    const leaseMs = config.cluster.leaseSeconds * 1000
    let node: ClusterNode | undefined
    const link = await ClusterLink.connect(url, log, (error) => node?.lost(error))
    const boss = await startBoss(url, config.cluster.leaseSeconds, log)
    const membership = new Membership({ id, records: store.cluster, link, leaseMs, log, onLeader: () => node?.lead(), onLost: (error) => node?.lost(error) })
    const calls = new LeaderCalls(boss, link, log)
    await calls.start()
    const remote = new RemoteRuns({ store, boss, link, membership, config, log, stopping: () => node?.stopping ?? false })
    node = new ClusterNode(config, store, log, link, boss, membership, calls, remote, onFatal)
    return node
  }

  /** The task board's `run`: tasks go to whichever process claims them. */
  get runTask(): RemoteRuns["run"] {
    return this.remote.run
  }

  get leads(): boolean {
    return this.membership.isLeader
  }

  /** Starts claiming tasks and beating. Once this process leads, `beforeLeading` runs before its
   *  Supervisor starts (what a stopped leader left shown is cleared) and `onLeader` after (the
   *  channels only a leader runs start there). */
  async start(supervisor: Supervisor, hooks: LeaderHooks): Promise<void> {
    this.supervisor = supervisor
    this.hooks = hooks
    // Until its Supervisor has started (recovery), a new leader reaches it through leader calls
    // too: they wait in the queue and are served once it is ready.
    const runner = supervisor.runner(routedCapabilities(supervisor.capabilities, this.calls, () => this.ready))
    const host = new TaskHost({ store: this.store, boss: this.boss, link: this.link, membership: this.membership, config: this.config, log: this.log, runner: () => runner, refresh: () => supervisor.profiles.load() })
    this.host = host
    await this.link.listen(CANCEL_CHANNEL, (payload) => {
      const { id, reason } = JSON.parse(payload) as { id: string; reason: string }
      host.cancel(id, String(reason))
    })
    this.claimers = Object.values(TASK_QUEUES).map((queue) => new Claimer<TaskJob>(this.boss, queue, this.config.workerConcurrency, (job) => host.handle(queue, job), this.log))
    await this.link.listen(WORK_CHANNEL, () => this.claimers.forEach((claimer) => claimer.wake()))
    await supervisor.profiles.load()
    // On record (and holding its process lock) before it claims anything: a claim by a process
    // the leader cannot see would count as its holder dead.
    await this.membership.start()
    for (const claimer of this.claimers) claimer.start()
  }

  /** An inbound message that reached this process: the Supervisor's gate takes it here when
   *  this process leads, else the leader does. */
  async take(message: InboundMessage): Promise<InboundOutcome | void> {
    if (this.ready) return this.supervisor!.gate.take(message)
    const packed = await packInbound(message, join(this.config.dataDir, "inbound"), this.config.attachments.maxBytes)
    return this.calls.call<InboundOutcome>("inbound", [packed], { waitMs: INBOUND_WAIT_MS })
  }

  /** A hook's event, raised by the leader's scheduler. */
  async raise(name: string): Promise<void> {
    if (this.ready) return this.supervisor!.scheduler.raise(name)
    await this.calls.call("raise", [name], { waitMs: INBOUND_WAIT_MS })
  }

  /** A graceful stop begins: no more tasks are claimed here; those in hand go on. */
  stopClaiming(): void {
    for (const claimer of this.claimers) claimer.pause()
  }

  /** Resolves once the tasks this process runs have ended (after stopClaiming). */
  async idle(): Promise<void> {
    await Promise.all(this.claimers.map((claimer) => claimer.drained()))
  }

  /** Claims nothing more and hands the runs in hand back (released: the next run of each does
   *  not count as an attempt). From now on a task the Supervisor stops following is left to the
   *  next leader. Then the app stops the Supervisor, then `stop()`. */
  async stopWork(): Promise<void> {
    this.stopping = true
    this.ready = false
    this.host?.stop()
    // Calls in hand go back to the queue for the next leader (an approval waits there), before
    // the Supervisor that answers them stops.
    await this.calls.stop()
    await Promise.all(this.claimers.map((claimer) => claimer.stop()))
  }

  /** Leaves the cluster, giving up the leader lock: only once the Supervisor has stopped. */
  async stop(): Promise<void> {
    await this.stopWork()
    this.remote.stop()
    await this.membership.stop()
    await this.boss.stop({ graceful: false, wait: true }).catch((error: unknown) => this.log.warn({ err: error }, "cluster: could not stop the job queue"))
    await this.link.close()
  }

  private hooks: LeaderHooks = { beforeLeading: async () => {}, onLeader: async () => {} }

  private lead(): void {
    const supervisor = this.supervisor!
    const leading = (async () => {
      // Hearing of runs' ends first: recovery follows the runs under way elsewhere.
      await this.remote.start()
      await this.hooks.beforeLeading()
      await supervisor.start()
      await this.calls.serve(leaderHandlers(supervisor.capabilities, (message) => supervisor.gate.take(message), (name) => supervisor.scheduler.raise(name), this.calls.stopSignal))
      this.ready = true
      await this.hooks.onLeader()
    })()
    leading.catch((error: unknown) => this.onFatal(new Error(`could not take up leading: ${errorText(error)}`)))
  }

  private lost(error: Error): void {
    if (this.stopping) return
    this.log.error({ err: error }, "cluster: lost the connection that holds the leader lock")
    // A leader without its lock could run beside the next one: it must stop. One that does not
    // lead loses its notifications; it stops too and is started again, as any crash.
    this.onFatal(error)
  }
}
