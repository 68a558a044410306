import { randomUUID } from "node:crypto"
import { mkdir, rm, stat, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { ConfigError } from "./config.ts"

/**
 * Makes sure DATA_DIR is a folder this user can write (creating it if need be): a path that is
 * a file, or a folder owned by someone else, will not change by restarting, so it is refused as
 * configuration (one line, exit 2) before anything else touches it.
 */
export async function ensureDataDir(dataDir: string): Promise<void> {
  // Unique: processes of a cluster share DATA_DIR, and pids repeat across machines.
  const probe = join(dataDir, `.probe-${randomUUID()}`)
  try {
    // Created private (0700 whatever the umask): privateDataDir keeps it so (src/data-dir/private.ts).
    await mkdir(dataDir, { recursive: true, mode: 0o700 })
    await writeFile(probe, "")
    await rm(probe)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error)
    const isFile = await stat(dataDir).then((info) => !info.isDirectory(), () => false)
    if (isFile) throw new ConfigError("DATA_DIR", `DATA_DIR ${dataDir} is a file, not a folder: set DATA_DIR to a folder`)
    const user = process.getuid ? ` (uid ${process.getuid()})` : ""
    throw new ConfigError("DATA_DIR", `DATA_DIR ${dataDir} cannot be written (${code}): give the user running Steward${user} write access to it, or set DATA_DIR to a folder it owns`)
  }
}
