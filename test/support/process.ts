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
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      this.stderr.push(chunk)
      for (const wake of this.waiters.splice(0)) wake()
    })
    this.exited = new Promise((resolve) => child.on("exit", (code) => {
      resolve(code)
      for (const wake of this.waiters.splice(0)) wake()
    }))
  }

  /** `node dist/main.js`, or with `viaNpm` `npm start` as an operator runs it. The admin
   *  server is off unless the test turns it on (ADMIN_PORT=0 picks a free port). */
  static start(env: Record<string, string>, { viaNpm = false, uid }: { viaNpm?: boolean; uid?: number } = {}): StewardProcess {
    const [command, args] = viaNpm ? ["npm", ["start", "--silent"]] : [process.execPath, ["dist/main.js"]]
    const child = spawn(command, args, {
      cwd: ROOT,
      // Only what the test gives: no keys or tokens from the developer's environment leak in.
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", LOG_LEVEL: "warn", ADMIN_PORT: "off", ...env },
      stdio: ["pipe", "pipe", "pipe"],
      // Another user (tests run as root): what that user may not write.
      ...(uid === undefined ? {} : { uid, gid: uid }),
    })
    return new StewardProcess(child)
  }

  /** The JSON log lines written so far (LOG_LEVEL info shows start-up's). */
  get logs(): Array<Record<string, unknown> & { msg?: string }> {
    return this.stderr
      .join("")
      .split("\n")
      .slice(0, -1) // the last piece is a line still being written, or empty
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
  }

  /** The admin server's port, from the start-up log line (needs ADMIN_PORT=0 and LOG_LEVEL=info). */
  async adminPort(): Promise<number> {
    const started = () => this.logs.find((line) => line.msg === "Steward started")
    await this.waitFor(() => started() !== undefined, "the start-up log line")
    return started()!.adminPort as number
  }

  send(text: string): void {
    this.child.stdin.write(`${text}\n`)
  }

  /** Lines the console printed as Steward's replies. */
  get replies(): string[] {
    return this.lines.filter((line) => line.startsWith("steward: ")).map((line) => line.slice("steward: ".length))
  }

  /** Resolves once `predicate` holds for the printed lines (or logs); fails after `timeoutMs` with what was printed.
   *  Output wakes it at once; what it cannot hear (a log file, a fake server's state) is looked at every 50 ms. */
  async waitFor(predicate: (p: StewardProcess) => boolean, what: string, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (!predicate(this)) {
      const left = deadline - Date.now()
      if (left <= 0 || this.child.exitCode !== null) {
        throw new Error(`waiting for ${what}: stdout=${JSON.stringify(this.lines)} stderr=${this.stderr.join("").slice(-2000)}`)
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 50))
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
