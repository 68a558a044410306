import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { ErrorCode, McpError, type CreateMessageRequest, type ElicitRequestFormParams, type ElicitResult, type ListRootsResult } from "@modelcontextprotocol/sdk/types.js"
import type { Logger } from "pino"
import type { ToolContext } from "../tool/tool.ts"
import { CallsInFlight } from "./calls.ts"
import type { ServerRequests } from "./client.ts"
import { elicit } from "./elicitation.ts"
import { workspaceRoot } from "./roots.ts"
import { sample } from "./sampling.ts"

/** How long a call waits, after telling the server its roots changed, for the server to ask
 *  for them again — so that the call is judged against its own user's workspace, not the last one. */
const ROOTS_REASK_MS = 1_000

/**
 * One server's requests to Steward, answered for the call they serve (the server serves one
 * caller at a time, see CallsInFlight): its user's question (elicitation), its run's model
 * (sampling), its user's workspace (roots). A request outside any call is refused
 * (elicitation: cancelled), never left hanging.
 */
export class CallerRequests implements ServerRequests {
  readonly calls = new CallsInFlight()
  /** The root the server was last told of (`roots/list_changed` when a call brings another). */
  private root?: string
  /** Whether this connection's server has asked for its roots (only then is it told of a change). */
  private asked = false
  private elicitations = 0
  /** Whether this server asks for its roots again when told they changed (unknown until seen). */
  private reasks?: boolean
  private onRootsAsked?: () => void

  constructor(
    private readonly server: string,
    private readonly options: { elicitationTimeoutMs: number; log: Logger; client: () => Client | undefined; toolsChanged: () => void },
  ) {}

  async elicit(params: ElicitRequestFormParams): Promise<ElicitResult> {
    const ctx = this.calls.owner()
    if (!ctx) {
      this.options.log.warn({ mcp: this.server }, `MCP server ${this.server} asked a question outside a tool call; cancelled`)
      return { action: "cancel" }
    }
    const seq = this.elicitations++
    return this.calls.answer(() => elicit(ctx, this.server, params, this.options.elicitationTimeoutMs, seq))
  }

  sample(params: CreateMessageRequest["params"]) {
    const ctx = this.calls.owner()
    if (!ctx) throw new McpError(ErrorCode.InvalidRequest, "sampling is answered only during a tool call")
    return this.calls.answer(() => sample(ctx, this.server, params))
  }

  roots(): ListRootsResult {
    const ctx = this.calls.owner()
    if (ctx) this.root = workspaceRoot(ctx).uri
    this.asked = true
    this.onRootsAsked?.()
    return { roots: this.root ? [{ uri: this.root, name: "workspace" }] : [] }
  }

  toolsChanged(): void {
    this.options.toolsChanged()
  }

  /** Before a call: a server that knows of another user's workspace is told its roots changed,
   *  and the call waits (briefly) for the server to ask for the new ones. */
  async beforeCall(ctx: ToolContext): Promise<void> {
    const uri = workspaceRoot(ctx).uri
    if (uri === this.root) return
    this.root = uri
    const client = this.options.client()
    if (!this.asked || !client) return
    const asked = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), this.reasks === false ? 0 : ROOTS_REASK_MS)
      this.onRootsAsked = () => (clearTimeout(timer), resolve(true))
    })
    await client.sendRootsListChanged().catch(() => {})
    // A server seen not to ask again keeps no roots of its own: no wait for it.
    this.reasks = await asked
    this.onRootsAsked = undefined
    if (!this.reasks) return
    // Once the answer has gone out, a ping's round trip lets the server take it in before the call.
    await new Promise((resolve) => setImmediate(resolve))
    await client.ping({ timeout: ROOTS_REASK_MS }).catch(() => {})
  }

  /** A new connection: a new server process or session, which has not asked yet. */
  connected(): void {
    this.asked = false
    this.reasks = undefined
  }
}
