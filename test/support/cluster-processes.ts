/** Real Steward processes (`node dist/main.js`) as one cluster on one Postgres, for end-to-end tests. */
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { freePort } from "../../scripts/free-port.mjs"
import type { ProcessRecord } from "../../src/store/records.ts"
import type { Store } from "../../src/store/store.ts"
import { EventSender, type EventCallback } from "../fakes/slack-api.ts"
import { StewardProcess } from "./process.ts"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))

/** One Steward process of the cluster, with its Slack HTTP endpoint. */
export interface Member {
  steward: StewardProcess
  port: number
  sender: EventSender
  /** Its Membership id, once its process record is in the store. */
  id?: string
  killed: boolean
}

/** The processes of one cluster, all started with the same `env` (each on a Slack port of its own). */
export class ProcessCluster {
  readonly members: Member[] = []
  private next = 0

  constructor(
    private readonly env: Record<string, string>,
    private readonly store: Store,
    private readonly signingSecret: string,
  ) {}

  async start(): Promise<Member> {
    const port = await freePort()
    const steward = StewardProcess.start({ ...this.env, SLACK_PORT: String(port) })
    const member: Member = { steward, port, sender: new EventSender(`http://127.0.0.1:${port}/slack/events`, this.signingSecret), killed: false }
    this.members.push(member)
    return member
  }

  get alive(): Member[] {
    return this.members.filter((member) => !member.killed)
  }

  /** The process records in the store, each joined to its member (by pid). */
  async records(): Promise<Array<ProcessRecord & { member?: Member }>> {
    const records = await this.store.cluster.processes()
    return records.map((record) => {
      const member = this.members.find((m) => m.steward.child.pid === record.pid)
      if (member && !member.id) member.id = record.id
      return { ...record, member }
    })
  }

  /** Waits until every live member has its record, seen within the lease, and exactly one of them leads; returns the leader. */
  async settled(leaseMs: number, timeoutMs = 20_000): Promise<Member> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      for (const member of this.alive) if (member.steward.child.exitCode !== null) throw new Error(`a Steward process exited: ${member.steward.stderr.join("").slice(-2000)}`)
      const records = (await this.records()).filter((record) => record.member && !record.member.killed && Date.now() - Date.parse(record.seenAt) < leaseMs)
      const leaders = records.filter((record) => record.leader)
      if (records.length === this.alive.length && leaders.length === 1) return leaders[0]!.member!
      if (Date.now() > deadline) {
        const logs = this.alive.map((member) => `pid ${member.steward.child.pid}: ${member.steward.stderr.join("").slice(-1500)}`)
        throw new Error(`the cluster did not settle within ${timeoutMs} ms: ${JSON.stringify(records.map(({ member: _m, ...r }) => r))}\n${logs.join("\n")}`)
      }
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }

  /** SIGKILL: no goodbye, its record and claims stay behind as a dead process's would. */
  async kill(member: Member): Promise<void> {
    member.killed = true
    await member.steward.kill("SIGKILL")
  }

  /** Delivers a signed event as Slack does: to the processes in turn, and on a refused
   *  connection or an error answer to the next one, marked as a retry. */
  async deliver(body: EventCallback, attempts = 10): Promise<void> {
    let lastError: unknown
    for (let retry = 0; retry < attempts; retry++) {
      // A process is sent events once it is on record (a replacement still starting is not yet).
      const started = this.alive.filter((member) => member.id !== undefined)
      const alive = started.length > 0 ? started : this.alive
      const member = alive[this.next++ % alive.length]!
      try {
        const delivery = await member.sender.event(body, retry > 0 ? { retryNum: retry } : {})
        if (delivery.status === 200) return
        lastError = new Error(`HTTP ${delivery.status}: ${delivery.body}`)
      } catch (error) {
        lastError = error
      }
      await new Promise((resolve) => setTimeout(resolve, 100 * Math.min(retry + 1, 5)))
    }
    throw new Error(`event ${body.event_id} not delivered: ${String(lastError)}`)
  }

  async stop(): Promise<void> {
    await Promise.all(this.alive.map((member) => (member.steward.child.exitCode === null ? member.steward.kill("SIGKILL") : undefined)))
  }
}

export interface StatusReport {
  running: boolean
  processes: Array<ProcessRecord & { alive: boolean }>
}

/** `steward status --json`, as an operator runs it against the cluster's store. */
export async function clusterStatus(env: Record<string, string>): Promise<StatusReport> {
  const { stdout } = await promisify(execFile)(process.execPath, ["dist/cli.js", "status", "--json"], { cwd: ROOT, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env }, timeout: 15_000 })
  return JSON.parse(stdout) as StatusReport
}
