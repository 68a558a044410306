/** Tasks waiting to run: higher priority first, first-in first-out within a priority. */
export class TaskQueue {
  private items: Array<{ id: string; priority: number; seq: number }> = []
  private seq = 0

  get size(): number {
    return this.items.length
  }

  push(id: string, priority: number): void {
    const item = { id, priority, seq: this.seq++ }
    // Binary search for the first item that should run after this one.
    let lo = 0
    let hi = this.items.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      const other = this.items[mid]!
      if (other.priority > item.priority || (other.priority === item.priority && other.seq < item.seq)) lo = mid + 1
      else hi = mid
    }
    this.items.splice(lo, 0, item)
  }

  shift(): string | undefined {
    return this.items.shift()?.id
  }

  remove(id: string): boolean {
    const at = this.items.findIndex((item) => item.id === id)
    if (at >= 0) this.items.splice(at, 1)
    return at >= 0
  }
}
