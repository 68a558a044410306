import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process"
import { fileURLToPath } from "node:url"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))

/** Steward started as a real program — the build `npm start` runs (`node dist/main.js`, built by
 *  the tests' global setup) — driven through its console. */
export class StewardProcess {
  readonly lines: string[] = []
  readonly stderr: string[] = []
  readonly exited: Promise<number | null>
  private waiters: Array<() => void> = []

  private constructor(readonly child: ChildProcessWithoutNullStreams) {
    let partial = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      const parts = (partial + chunk).split("\n")
      partial = parts.pop()!
      this.lines.push(...parts)
      for (const wake of this.waiters.splice(0)) wake()
    })
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => this.stderr.push(chunk))
    this.exited = new Promise((resolve) => child.on("exit", (code) => {
      resolve(code)
      for (const wake of this.waiters.splice(0)) wake()
    }))
  }

  static start(env: Record<string, string>): StewardProcess {
    const child = spawn(process.execPath, ["dist/main.js"], {
      cwd: ROOT,
      // Only what the test gives: no keys or tokens from the developer's environment leak in.
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", LOG_LEVEL: "warn", ...env },
      stdio: ["pipe", "pipe", "pipe"],
    })
    return new StewardProcess(child)
  }

  send(text: string): void {
    this.child.stdin.write(`${text}\n`)
  }

  /** Lines the console printed as Steward's replies. */
  get replies(): string[] {
    return this.lines.filter((line) => line.startsWith("steward: ")).map((line) => line.slice("steward: ".length))
  }

  /** Resolves once `predicate` holds for the printed lines; fails after `timeoutMs` with what was printed. */
  async waitFor(predicate: (p: StewardProcess) => boolean, what: string, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (!predicate(this)) {
      const left = deadline - Date.now()
      if (left <= 0 || this.child.exitCode !== null) {
        throw new Error(`waiting for ${what}: stdout=${JSON.stringify(this.lines)} stderr=${this.stderr.join("").slice(-2000)}`)
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left)
        this.waiters.push(() => {
          clearTimeout(timer)
          resolve()
        })
      })
    }
  }

  kill(signal: NodeJS.Signals = "SIGKILL"): Promise<number | null> {
    this.child.kill(signal)
    return this.exited
  }
}
