import { readFileSync } from "node:fs"
import { mkdir, readFile, rm, stat, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import lockfile from "proper-lockfile"
import { ConfigError } from "../config/config.ts"

/** The lock itself: a folder proper-lockfile creates atomically (mkdir) and keeps fresh. */
const LOCK_NAME = "steward.lock"
/** Who holds the lock, for the message the second copy prints and for telling a dead holder. */
const PID_NAME = "steward.pid"
/** A lock its holder has not refreshed for this long is stale (proper-lockfile refreshes it every
 *  half of this). Generous, so an event loop stalled for seconds does not lose the lock. */
const STALE_MS = 30_000
/** A holder writes its pid a moment after taking the lock; a pid file naming a dead process
 *  is read twice this far apart before the lock is taken for stale, so a holder that has just
 *  taken the lock (and not yet written its pid over a dead predecessor's) is not mistaken for it. */
const PID_SETTLE_MS = 250

/** Another Steward runs on the same data folder: a configuration conflict, reported as one line, exit 2. */
export class DataDirInUse extends ConfigError {
  constructor(
    readonly dataDir: string,
    readonly pid: number | undefined,
  ) {
    super("DATA_DIR", `DATA_DIR ${dataDir} is in use by another Steward (pid ${pid ?? "unknown"}); stop it, or give this one another DATA_DIR`)
  }
}

export interface DataDirLock {
  release(): Promise<void>
}

/**
 * Makes this process the only Steward running on `dataDir`: two would run the same queued work
 * twice. Throws DataDirInUse while another live process holds the lock. A lock left by a process
 * that is gone (killed, crashed) is taken over at once when its pid is dead, or after STALE_MS
 * without refresh otherwise (a holder on another machine sharing the folder).
 *
 * Only the server takes it: the owner CLI writes to the same SQLite file beside it.
 * `onCompromised` is told when the lock was lost while held (its folder removed or refreshed by
 * someone else, or not refreshed in time).
 */
export async function lockDataDir(dataDir: string, onCompromised: (error: Error) => void): Promise<DataDirLock> {
  await mkdir(dataDir, { recursive: true })
  const lockPath = join(dataDir, LOCK_NAME)
  const pidPath = join(dataDir, PID_NAME)
  await removeIfHolderDead(lockPath, pidPath)
  let release: () => Promise<void>
  try {
    release = await lockfile.lock(dataDir, { lockfilePath: lockPath, realpath: false, stale: STALE_MS, retries: 0, onCompromised })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ELOCKED") throw new DataDirInUse(dataDir, await pidIn(pidPath))
    throw error
  }
  await writeFile(pidPath, `${process.pid}\n`)
  return {
    async release() {
      if ((await pidIn(pidPath)) === process.pid) await rm(pidPath, { force: true })
      await release().catch((error: NodeJS.ErrnoException) => {
        // Already released, or taken away (then onCompromised has said so).
        if (error.code !== "ERELEASED" && error.code !== "ENOTACQUIRED") throw error
      })
    },
  }
}

export type LockState = { state: "free" } | { state: "held"; pid?: number } | { state: "stale"; pid?: number }

/**
 * Whether a Steward runs on `dataDir` (for `steward status` and `doctor`): the lock is held by a
 * live process, or left by one that is gone (start-up takes such a lock over), or free.
 */
export async function lockState(dataDir: string): Promise<LockState> {
  const lockPath = join(dataDir, LOCK_NAME)
  if (!(await exists(lockPath))) return { state: "free" }
  const pid = await pidIn(join(dataDir, PID_NAME))
  if (pid !== undefined) return alive(pid) ? { state: "held", pid } : { state: "stale", pid }
  // No pid (yet): the holder's refreshes say whether it lives.
  const fresh = await lockfile.check(dataDir, { lockfilePath: lockPath, realpath: false, stale: STALE_MS })
  return fresh ? { state: "held" } : { state: "stale" }
}

async function removeIfHolderDead(lockPath: string, pidPath: string): Promise<void> {
  if (!(await exists(lockPath))) return
  const holder = await pidIn(pidPath)
  if (holder === undefined || alive(holder)) return
  await sleep(PID_SETTLE_MS)
  if ((await pidIn(pidPath)) !== holder) return
  await rm(lockPath, { recursive: true, force: true })
}

async function pidIn(pidPath: string): Promise<number | undefined> {
  try {
    const pid = Number((await readFile(pidPath, "utf8")).trim())
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

/** Whether a process with this pid runs. Our own pid is not a holder: it is a predecessor that
 *  had the same pid (containers often start the server as pid 1 every time). A zombie — exited,
 *  not yet reaped by its parent (a supervisor that restarts it may reap late) — runs no more. */
function alive(pid: number): boolean {
  if (pid === process.pid) return false
  try {
    process.kill(pid, 0)
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code === "EPERM" && !zombie(pid)
  }
  return !zombie(pid)
}

/** Linux's process state (the field after the parenthesised name in /proc/<pid>/stat) is Z;
 *  elsewhere (no /proc) nothing is known, and the process counts as running. */
function zombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")
  } catch {
    return false
  }
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  )
}
