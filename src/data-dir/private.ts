import { chmodSync, mkdirSync, statSync } from "node:fs"

/** Files and folders Steward creates are its user's alone: 0600 and 0700. */
export const PRIVATE_UMASK = 0o077
const PRIVATE_DIR_MODE = 0o700

/**
 * Makes the data folder private before anything is written in it: the process's umask becomes
 * 0077, so every file it and the libraries it runs create (the store, memory notes, uploads,
 * workspaces, logs, backups) is 0600 and every folder 0700 whatever umask it was started with;
 * a new DATA_DIR is created 0700, and an existing one that others may read is tightened to 0700
 * (it holds everything that came before, which is then out of their reach). When it cannot be
 * tightened (another owner), the warning returned says so and start-up goes on.
 */
export function privateDataDir(dataDir: string): string | undefined {
  process.umask(PRIVATE_UMASK)
  mkdirSync(dataDir, { recursive: true, mode: PRIVATE_DIR_MODE })
  const mode = statSync(dataDir).mode & 0o777
  if ((mode & ~PRIVATE_DIR_MODE) === 0) return undefined
  try {
    chmodSync(dataDir, PRIVATE_DIR_MODE)
    return undefined
  } catch (error) {
    return `DATA_DIR ${dataDir} is readable by others (mode ${mode.toString(8)}) and could not be made private: ${(error as NodeJS.ErrnoException).code ?? String(error)}; run chmod 700 on it`
  }
}
