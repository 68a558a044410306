import type { ToolContext } from "../tool/tool.ts"

type Waiter = { ctx: ToolContext; admit: () => void }

/** Who a server's request acts for: the user, in the conversation a question goes to. */
const callerOf = (ctx: ToolContext) => `${ctx.user}\u0000${ctx.conversation}`

/**
 * The tool calls under way on one server, and who they act for. A server's own requests
 * (elicitation, sampling, roots) carry no link to the call they serve — not on stdio, not over
 * SSE, and the SDK's client hands its handlers none over Streamable HTTP — and a server's roots
 * belong to the whole connection. So one server serves one caller (a user in a conversation) at
 * a time: that caller's calls run together, another caller's call waits until they are done, in
 * the order they came. Every request is then answered for the caller of the calls under way,
 * never for someone else.
 */
export class CallsInFlight {
  private readonly calls = new Map<number, ToolContext>()
  private readonly waiting: Waiter[] = []
  private next = 0
  private answering = 0
  private answeredAt = 0

  /** Records a call once the server is free for its caller (at once when it already serves
   *  them); the returned function ends it. `onWait` says the call waits. Aborting the call's
   *  signal gives up waiting. */
  async enter(ctx: ToolContext, onWait?: () => void): Promise<() => void> {
    ctx.abort.throwIfAborted()
    const key = this.next++
    const end = () => {
      this.calls.delete(key)
      this.admitWaiting()
    }
    if (this.admits(ctx)) {
      this.calls.set(key, ctx)
      return end
    }
    onWait?.()
    await new Promise<void>((resolve, reject) => {
      const give = () => {
        this.waiting.splice(this.waiting.indexOf(waiter), 1)
        this.admitWaiting()
        reject(ctx.abort.reason)
      }
      // Recorded as it is admitted, so that no other caller's call slips in before it runs.
      const waiter: Waiter = {
        ctx,
        admit: () => {
          ctx.abort.removeEventListener("abort", give)
          this.calls.set(key, ctx)
          resolve()
        },
      }
      this.waiting.push(waiter)
      ctx.abort.addEventListener("abort", give, { once: true })
    })
    return end
  }

  /** Runs the answer to a server's request (a question to the user, a model's completion):
   *  meanwhile the server waits for Steward, so its calls' silence does not count (quiet()). */
  async answer<T>(work: () => Promise<T>): Promise<T> {
    this.answering++
    try {
      return await work()
    } finally {
      this.answering--
      this.answeredAt = Date.now()
    }
  }

  /** How long the server has been waiting for nothing of Steward's: 0 while a request of its is
   *  answered, else the time since the last answer (or since `since`, if later). */
  quiet(since: number): number {
    return this.answering > 0 ? 0 : Date.now() - Math.max(since, this.answeredAt)
  }

  /** The call a server request belongs to: the newest of the one caller's calls under way. */
  owner(): ToolContext | undefined {
    return [...this.calls.values()].at(-1)
  }

  /** At once when the server is idle, or serves this caller and nobody waits before them. */
  private admits(ctx: ToolContext): boolean {
    const current = this.owner()
    return !current || (this.waiting.length === 0 && callerOf(current) === callerOf(ctx))
  }

  /** Once a caller's calls are done: the next waiting caller, with all their waiting calls. */
  private admitWaiting(): void {
    if (this.calls.size > 0 || this.waiting.length === 0) return
    const caller = callerOf(this.waiting[0]!.ctx)
    for (const waiter of this.waiting.filter((w) => callerOf(w.ctx) === caller)) {
      this.waiting.splice(this.waiting.indexOf(waiter), 1)
      waiter.admit()
    }
  }
}
