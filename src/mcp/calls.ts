import type { ToolContext } from "../tool/tool.ts"

/**
 * The tool calls under way on one server. A server's own requests (elicitation, sampling, roots)
 * carry no link to the call they serve, so they are answered for the call under way — when
 * several are, only if they all act for the same user in the same conversation (the newest
 * call's run then answers); otherwise no call can be told apart and the request is refused.
 */
export class CallsInFlight {
  private readonly calls = new Map<number, ToolContext>()
  private next = 0

  /** Records a call until the returned function is called. */
  add(ctx: ToolContext): () => void {
    const key = this.next++
    this.calls.set(key, ctx)
    return () => void this.calls.delete(key)
  }

  /** The call a server request belongs to; undefined when there is none, or no single user's. */
  owner(): ToolContext | undefined {
    const calls = [...this.calls.values()]
    const newest = calls.at(-1)
    if (!newest) return undefined
    return calls.every((ctx) => ctx.user === newest.user && ctx.conversation === newest.conversation) ? newest : undefined
  }
}
