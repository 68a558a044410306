/** Benchmark figures, printed beside their targets or (with --json) as JSON lines. A figure
 *  without a target is context for the others (build time, heap). */
export class Figures {
  constructor(private readonly json: boolean) {}

  add(name: string, value: number, unit: string, target?: string): void {
    const rounded = Number(value.toFixed(value < 10 ? 3 : 1))
    if (this.json) process.stdout.write(`${JSON.stringify({ name, value: rounded, unit, target: target ?? null })}\n`)
    else {
      const verdict = target === undefined ? "" : `target ${target} ${meets(value, target) ? "ok" : "MISSED"}`
      process.stdout.write(`${name.padEnd(44)} ${String(rounded).padStart(10)} ${unit.padEnd(8)} ${verdict}\n`)
    }
  }
}

function meets(value: number, target: string): boolean {
  const [op, limit] = target.split(" ") as [string, string]
  return op === "<=" ? value <= Number(limit) : value >= Number(limit)
}
