/** Scheduler work, one piece at a time: a timer, a task's end and a cancel never interleave on a
 *  trigger, because each reads the trigger's state only after the previous one wrote it. */
export class SerialChain {
  private chain: Promise<unknown> = Promise.resolve()

  run<T>(op: () => Promise<T>): Promise<T> {
    const next = this.chain.then(op)
    this.chain = next.catch(() => {})
    return next
  }

  /** Resolves once no work is under way, including work queued while waiting. */
  async settled(): Promise<void> {
    let seen: Promise<unknown>
    do {
      seen = this.chain
      await seen
    } while (seen !== this.chain)
  }
}
