import { evaluateCondition, nextTimeOf, type ConditionFacts } from "./condition.ts"
import type { Condition } from "../core/types.ts"
import { earliest, timerAt } from "./timer.ts"

export interface Watcher {
  condition: Condition
  /** Events count from here. */
  since: string
  /** Called once, when the condition is decided; the watcher is gone by then. */
  onResult: (result: "holds" | "never") => void
}

/**
 * Conditions waited for, re-evaluated whenever something they may depend on happened (a task
 * ended, an event was raised) and at the next `time` any of them names. Evaluation is cheap
 * and in memory, so every change re-evaluates every watcher rather than tracking dependencies.
 */
export class ConditionWatch {
  private watchers = new Map<string, Watcher>()
  private cancelTimer?: () => void

  constructor(private readonly facts: () => ConditionFacts) {}

  /** Replaces a watcher of the same id. May call onResult before it returns. */
  add(id: string, watcher: Watcher): void {
    this.watchers.set(id, watcher)
    this.check()
  }

  remove(id: string): void {
    this.watchers.delete(id)
  }

  check(): void {
    const facts = this.facts()
    for (const [id, watcher] of [...this.watchers]) {
      // A watcher removed or replaced by an earlier callback of this round is not decided here.
      if (this.watchers.get(id) !== watcher) continue
      const result = evaluateCondition(watcher.condition, facts, watcher.since)
      if (result === "waiting") continue
      this.watchers.delete(id)
      watcher.onResult(result)
    }
    this.armTimer(facts.now)
  }

  stop(): void {
    this.cancelTimer?.()
    this.watchers.clear()
  }

  private armTimer(now: Date): void {
    this.cancelTimer?.()
    this.cancelTimer = undefined
    const next = earliest([...this.watchers.values()].map((watcher) => nextTimeOf(watcher.condition, now)))
    if (next) this.cancelTimer = timerAt(next, () => this.check())
  }
}
