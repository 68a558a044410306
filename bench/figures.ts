/** Benchmark figures, printed beside their targets or (with --json) as JSON lines. */
export class Figures {
  constructor(private readonly json: boolean) {}

  add(name: string, value: number, unit: string, target: string): void {
    const rounded = Number(value.toFixed(value < 10 ? 3 : 1))
    if (this.json) process.stdout.write(`${JSON.stringify({ name, value: rounded, unit, target })}\n`)
    else process.stdout.write(`${name.padEnd(40)} ${String(rounded).padStart(10)} ${unit.padEnd(8)} target ${target} ${meets(value, target) ? "ok" : "MISSED"}\n`)
  }
}

function meets(value: number, target: string): boolean {
  const [op, limit] = target.split(" ") as [string, string]
  return op === "<=" ? value <= Number(limit) : value >= Number(limit)
}
