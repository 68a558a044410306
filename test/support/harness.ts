import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pino from "pino"
import { startApp, type App } from "../../src/app.ts"
import type { Channel, ChannelHandlers } from "../../src/channel/channel.ts"
import type { Button, InboundMessage, InboundOutcome, OutgoingFile, OutgoingMessage, ProgressUpdate } from "../../src/core/types.ts"
import { loadConfig, type Config } from "../../src/config/config.ts"
import type { MemoryHit } from "../../src/tool/capabilities.ts"
import { startModelServer, type ModelServer, type Script } from "../fakes/model-server.ts"

/** A channel the test drives: it hands messages in and records what Steward sends. */
export class TestChannel implements Channel {
  readonly name = "test"
  readonly sent: Array<{ conversation: string; text: string; messageId: string; buttons?: Button[]; file?: OutgoingFile; ref?: string }> = []
  readonly edits: Array<{ conversation: string; messageId: string; text: string }> = []
  readonly activities: Array<{ conversation: string; busy: boolean }> = []
  commands: ChannelHandlers["commands"] = []
  conversations: string[] = []
  readonly progressUpdates: Array<{ conversation: string; update: ProgressUpdate }> = []
  /** Set to make the next sends fail (platform down). */
  failures = 0
  private onMessage?: ChannelHandlers["onMessage"]
  private waiters: Array<() => void> = []

  async start(handlers: ChannelHandlers): Promise<void> {
    this.onMessage = handlers.onMessage
    this.commands = handlers.commands
    this.conversations = handlers.conversations ?? []
  }

  say(text: string, conversation = "test:c1", user = "test:u1", extra: Partial<InboundMessage> = {}): Promise<InboundOutcome | void> {
    return this.onMessage!({ conversation, user, text, ...extra })
  }

  /** Presses the button `label` of the newest message that has it. */
  press(label: string, conversation = "test:c1", user = "test:u1"): Promise<InboundOutcome | void> {
    const button = this.sent.findLast((m) => m.conversation === conversation && m.buttons?.some((b) => b.label === label))?.buttons?.find((b) => b.label === label)
    if (!button) throw new Error(`no button "${label}" in ${conversation}`)
    return this.onMessage!({ conversation, user, text: label, action: button.id })
  }

  async send(conversation: string, message: OutgoingMessage): Promise<{ messageId: string }> {
    if (this.failures > 0) {
      this.failures--
      throw new Error("platform unavailable")
    }
    const messageId = `m${this.sent.length + 1}`
    this.sent.push({ conversation, text: message.text, messageId, buttons: message.buttons, ...(message.file && { file: message.file }), ref: message.ref })
    this.wake()
    return { messageId }
  }

  /** Like Slack's metadata lookup: a message sent with this outbox id, if there is one. */
  async findSent(conversation: string, ref: string): Promise<{ messageId: string } | undefined> {
    const sent = this.sent.find((m) => m.conversation === conversation && m.ref === ref)
    return sent && { messageId: sent.messageId }
  }

  async edit(conversation: string, messageId: string, message: OutgoingMessage): Promise<void> {
    this.edits.push({ conversation, messageId, text: message.text })
    this.wake()
  }

  activity(conversation: string, busy: boolean): void {
    this.activities.push({ conversation, busy })
  }

  private wake(): void {
    for (const wake of this.waiters.splice(0)) wake()
  }

  /** Resolves once `check` holds, re-checked after every send or edit. */
  async waitFor(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (!check()) {
      const left = deadline - Date.now()
      if (left <= 0) throw new Error(`timed out waiting for ${what}; sent ${JSON.stringify(this.sent)}; edits ${JSON.stringify(this.edits)}`)
      await new Promise<void>((resolve) => {
        // What the channel does not hear of (the store, the model server) is looked at every 50 ms.
        const timer = setTimeout(resolve, Math.min(left, 50))
        this.waiters.push(() => {
          clearTimeout(timer)
          resolve()
        })
      })
    }
  }

  progress(conversation: string, update: ProgressUpdate): void {
    this.progressUpdates.push({ conversation, update })
  }

  /** Resolves once `count` messages were sent (to `conversation`, if given). */
  async waitForSent(count: number, conversation?: string, timeoutMs = 10_000): Promise<Array<{ conversation: string; text: string; buttons?: Button[] }>> {
    const matching = () => this.sent.filter((m) => !conversation || m.conversation === conversation)
    await this.waitFor(() => matching().length >= count, `${count} sent messages`, timeoutMs)
    return matching()
  }

  async stop(): Promise<void> {}
}

/** Memory that remembers in a list; the Supervisor tests are not about search quality. */
export class ListMemory {
  notes: Array<{ user: string; content: string }> = []
  /** Where a user's note files would be (memory.md for the prompt, /memory, forget). */
  constructor(readonly dir = mkdtempSync(join(tmpdir(), "steward-list-memory-"))) {}
  folder(user: string): string {
    return join(this.dir, user.replace(/[^\w-]/g, "-"))
  }
  compactions: Array<{ user: string; summary: string }> = []
  async remember(user: string, content: string): Promise<{ path: string }> {
    this.notes.push({ user, content })
    return { path: `note-${this.notes.length}.md` }
  }
  async search(user: string, search: { query: string }): Promise<MemoryHit[]> {
    return this.notes.filter((n) => n.user === user && n.content.includes(search.query)).map((n) => ({ source: "note.md", date: "2026-01-01", content: n.content, score: 1 }))
  }
  async recordCompaction(user: string, summary: string): Promise<void> {
    this.compactions.push({ user, summary })
  }
}

export interface Harness {
  app: App
  server: ModelServer
  channel: TestChannel
  config: Config
  dataDir: string
  memory: ListMemory
  /** Starts Steward again on the same data folder and model server, after a crash (the store
   *  is closed first, so nothing after that point is written) or a graceful stop. */
  restart(options?: { graceful?: boolean; env?: Record<string, string>; whileDown?: () => Promise<void>; keepSent?: boolean }): Promise<void>
  close(): Promise<void>
}

/** Steward in this process: real store, Supervisor and AI SDK provider, talking HTTP to a
 *  scripted model server on 127.0.0.1. */
export async function startHarness(script: Script, env: Record<string, string> = {}, log: pino.Logger = testLogger()): Promise<Harness> {
  const server = await startModelServer(script)
  const dataDir = mkdtempSync(join(tmpdir(), "steward-test-"))
  const memory = new ListMemory()
  const makeConfig = (extra: Record<string, string>) => {
    const vars: Record<string, string> = { DATA_DIR: dataDir, MODEL: "openai-compatible:scripted", OPENAI_COMPATIBLE_BASE_URL: server.url, MODEL_MAX_RETRIES: "2", ...env, ...extra }
    const config = loadConfig(vars)
    // The test channel is no channel Steward ships, so ALLOWED_USERS would refuse its users.
    if (vars.ALLOWED_USERS === undefined) config.allowedUsers = { anyone: false, users: new Set(["test:u1", "test:u2"]) }
    return config
  }
  const harness: Harness = {
    server,
    dataDir,
    memory,
    channel: new TestChannel(),
    config: makeConfig({}),
    app: undefined as unknown as App,
    async restart({ graceful = false, env: extra = {}, whileDown, keepSent = false } = {}) {
      if (graceful) await harness.app.stop()
      else {
        await harness.app.store.close()
        await harness.app.stop().catch(() => {})
      }
      await whileDown?.()
      // keepSent: the platform still shows what was sent before (and findSent looks there).
      const before = harness.channel.sent
      harness.channel = new TestChannel()
      if (keepSent) harness.channel.sent.push(...before)
      harness.config = makeConfig(extra)
      harness.app = await startApp(harness.config, log, [harness.channel], memory, undefined, LOCAL)
    },
    async close() {
      await harness.app.stop()
      await server.close()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
  harness.app = await startApp(harness.config, log, [harness.channel], memory, undefined, LOCAL)
  return harness
}

/** The hooks endpoint (on when HOOKS_TOKEN is set) listens where a test can reach it. */
const LOCAL = { hooksHost: "127.0.0.1", hooksPort: 0 }

/** Silent unless STEWARD_TEST_LOG names a level, for debugging a failing test. */
function testLogger() {
  return pino({ level: process.env.STEWARD_TEST_LOG ?? "silent" }, pino.destination(2))
}
