import { statSync } from "node:fs"
import { join } from "node:path"
import type { Command } from "commander"
import { Store } from "../store/store.ts"
import { MIN_PREFIX, resolveId as resolveIdPrefix } from "../supervisor/id-prefix.ts"
import { dataDirOf, loadConfig, settingOf, storeUrlOf, type Config } from "../config/config.ts"
import { redactUrl } from "../config/fields.ts"
import { refusal } from "../config/refusal.ts"

/** A command that could not do what was asked: `steward: <message>` on stderr and this exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message)
  }
}

/** The shortest id prefix a command takes: shorter ones match too much by accident. */

/** Whether `--json` (an option of the whole program) was given. */
export function wantsJson(command: Command): boolean {
  return command.optsWithGlobals<{ json?: boolean }>().json === true
}

/** Prints `data` as JSON for scripts, or the readable `text`. */
export function print(command: Command, data: unknown, text: () => string): void {
  process.stdout.write(wantsJson(command) ? `${JSON.stringify(data, null, 2)}\n` : text())
}

/** Columns padded to their widest cell, two spaces apart; the last column is not padded. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((header, i) => Math.max(header.length, ...rows.map((row) => (row[i] ?? "").length)))
  const line = (cells: string[]) => `${cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  ")}\n`
  return line(headers.map((header) => header.toUpperCase())) + rows.map(line).join("")
}

/** The one id that `prefix` names, by the same rule as in chat (an id, or a unique prefix of at
 *  least MIN_PREFIX characters); a prefix too short is a usage mistake (exit 2). */
export function resolveId(ids: readonly string[], prefix: string, what: string): string {
  if (prefix.trim().length < MIN_PREFIX) throw new CliError(`give at least ${MIN_PREFIX} characters of the ${what} id`, 2)
  const found = resolveIdPrefix(prefix, ids, what)
  if ("error" in found) throw new CliError(found.error)
  return found.id
}

/**
 * Opens the store (STORE_URL's database, else the data folder's) for one command. A folder with
 * no store is "no Steward data" rather than a new empty store (only `create` makes one: `event`
 * raises before the first start). A bad STORE_URL, a refused login or data from a newer Steward
 * is refused (exit 2); any other failure to open names the store (exit 1). Never a stack trace.
 */
export async function withStore<T>(use: (store: Store) => Promise<T>, { create = false }: { create?: boolean } = {}): Promise<T> {
  const dataDir = dataDirOf()
  const storeUrl = (() => {
    try {
      return storeUrlOf()
    } catch (error) {
      throw new CliError(refusal(error) ?? String(error), 2)
    }
  })()
  const file = join(dataDir, "steward.sqlite")
  if (!storeUrl && !create && !hasData(dataDir, file)) throw new CliError(`no Steward data in ${dataDir} (set DATA_DIR, or STORE_URL, to where Steward keeps it)`)
  const store = await Store.open(dataDir, storeUrl).catch((error: unknown) => {
    const refused = refusal(error)
    if (refused) throw new CliError(refused, 2)
    const message = error instanceof Error ? error.message : String(error)
    const fix = !storeUrl && NOT_ALLOWED.test(message) ? `; ${asOwner(dataDir)}` : ""
    throw new CliError(`could not open the store ${storeUrl ? redactUrl(storeUrl) : file}: ${message}${fix}`)
  })
  try {
    return await use(store)
  } finally {
    await store.close()
  }
}

/** A store this user may not open: its file or folder belongs to the user Steward runs as. */
const NOT_ALLOWED = /SQLITE_READONLY|SQLITE_CANTOPEN|EACCES|EPERM/

function asOwner(dataDir: string): string {
  let owner = ""
  try {
    owner = ` (uid ${statSync(dataDir).uid})`
  } catch {
    // Not even its owner can be read: the advice stands without it.
  }
  return `run steward as the user that owns ${dataDir}${owner}, e.g. sudo -u <that user> steward …`
}

/**
 * Whether `path` (a store, the memory folder) is in the data folder. Absent is "no Steward data";
 * a folder this user may not read is not absent — it is said so, with who may read it, instead
 * of claiming there is no data where there is.
 */
export function hasData(dataDir: string, path: string): boolean {
  try {
    statSync(path)
    return true
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === "ENOENT" || code === "ENOTDIR") return false
    throw new CliError(`cannot read ${path} (${code ?? String(error)}): ${asOwner(dataDir)}`)
  }
}

/** One variable as start-up reads it, for a command that needs nothing else; a bad value is a
 *  configuration mistake (exit 2). */
export function setting<K extends Parameters<typeof settingOf>[0]>(name: K): ReturnType<typeof settingOf<K>> {
  try {
    return settingOf(name)
  } catch (error) {
    throw new CliError(error instanceof Error ? error.message : String(error), 2)
  }
}

/** The configuration as start-up reads it; a mistake is the command's error (exit 2). */
export function config(): Config {
  try {
    return loadConfig(process.env)
  } catch (error) {
    throw new CliError(error instanceof Error ? error.message : String(error), 2)
  }
}

/** `2025-01-02 03:04 +01:00` — this machine's local time, named by its offset (`UTC` when
 *  none), so no one reads it as their own zone's — or "-". */
export function when(iso: string | undefined): string {
  if (!iso) return "-"
  const d = new Date(iso)
  const pad = (n: number) => String(Math.floor(n)).padStart(2, "0")
  const east = -d.getTimezoneOffset()
  const zone = east === 0 ? "UTC" : `${east > 0 ? "+" : "-"}${pad(Math.abs(east) / 60)}:${pad(Math.abs(east) % 60)}`
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())} ${zone}`
}

export function clip(text: string, length = 60): string {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length > length ? `${flat.slice(0, length - 1)}…` : flat
}
