import { lstatSync, realpathSync } from "node:fs"
import { lstat, mkdir, readdir } from "node:fs/promises"
import path from "node:path"
import { folderName } from "../memory/slug.ts"
import { ToolError, type ToolContext } from "./tool.ts"

/** Largest file the file tools read or write: bigger files would not fit a model's context anyway,
 *  and the cap keeps a runaway worker from filling the disk one call at a time. */
export const MAX_FILE_BYTES = 5 * 1024 * 1024

/**
 * The absolute path of `relPath` inside `workspaceDir`, or a ToolError when it is not a plain
 * relative path that stays inside: absolute paths, NUL bytes, `..` escapes and symlinks that lead
 * out are refused. Checks only, creates nothing.
 *
 * A symlink swapped in between this check and the caller's use is not caught; the workspace is the
 * user's own folder, so nothing else is expected to plant links there.
 */
export function resolveInWorkspace(workspaceDir: string, relPath: string): string {
  if (relPath.trim() === "") throw new ToolError("path is empty; give a path relative to the workspace, e.g. notes/todo.md")
  if (relPath.includes("\0")) throw new ToolError("path contains a NUL byte")
  if (path.isAbsolute(relPath)) {
    // Not echoed: a host path has no place in what the model or the user is shown.
    throw new ToolError("absolute paths are not allowed; give a path relative to the workspace")
  }
  const root = path.resolve(workspaceDir)
  const target = path.resolve(root, relPath)
  if (!isInside(root, target)) throw new ToolError(`${relPath} is outside the workspace`)

  // The lexical check cannot see symlinks. The part of the path that does not exist yet will be
  // created as plain folders, so the nearest existing ancestor decides where the path really leads.
  const existing = nearestExisting(root, target)
  if (existing !== undefined && !isInside(realpath(root, relPath), realpath(existing, relPath))) {
    throw new ToolError(`${relPath} leads outside the workspace through a symlink`)
  }
  return target
}

/**
 * The workspace of the user a run acts for: a folder of its own under the workspace root, named
 * like their memory folder (injective, so no two users share one). A user's tasks see only it:
 * `..` and symlinks that lead to another user's folder are outside, like any other place.
 */
export function userWorkspace(ctx: ToolContext): string {
  return path.join(ctx.workspaceDir, folderName(ctx.user))
}

/** resolveInWorkspace in the user's workspace, for a tool call; creates the folder on first use
 *  so a fresh data folder works without setup. */
export async function workspacePath(ctx: ToolContext, relPath: string): Promise<string> {
  try {
    await mkdir(userWorkspace(ctx), { recursive: true })
    return resolveInWorkspace(userWorkspace(ctx), relPath)
  } catch (err) {
    throw fsError(err, relPath)
  }
}

/** Bytes of the files in a workspace (symlinks count their own size, and are not followed). */
export async function workspaceUsage(root: string): Promise<number> {
  let total = 0
  const folders = [root]
  for (let folder = folders.pop(); folder !== undefined; folder = folders.pop()) {
    for (const entry of await readdir(folder, { withFileTypes: true })) {
      const entryPath = path.join(folder, entry.name)
      if (entry.isDirectory()) folders.push(entryPath)
      else total += (await lstat(entryPath)).size
    }
  }
  return total
}

/** How paths are shown to the model: relative to the workspace, with "/" on every platform. */
export function workspaceRelative(workspaceDir: string, absPath: string): string {
  return path.relative(path.resolve(workspaceDir), absPath).split(path.sep).join("/") || "."
}

/** A path argument normalised for permission rules, so "a/./b" and "a/x/../b" match rules for "a/b". */
export function pathPattern(relPath: string): string {
  return path.posix.normalize(relPath.replaceAll("\\", "/"))
}

/**
 * Any failure of a file tool as a ToolError the model can act on, worded with the path it gave:
 * node's own messages name absolute host paths (the data folder, the user's folder), which are
 * not the model's or the user's business.
 */
export function fsError(err: unknown, relPath: string): ToolError {
  if (err instanceof ToolError) return err
  const code = (err as NodeJS.ErrnoException).code
  switch (code) {
    case "ENOENT":
      return new ToolError(`no such file: ${relPath}`)
    case "ENOTDIR":
    case "EEXIST":
      return new ToolError(`${relPath}: part of the path is a file, not a folder`)
    case "EISDIR":
      return new ToolError(`${relPath} is a folder, not a file`)
    case "EACCES":
    case "EPERM":
      return new ToolError(`permission denied: ${relPath}`)
    case "ELOOP":
      return new ToolError(`${relPath} goes through a symlink loop`)
    case "ENOSPC":
    case "EDQUOT":
      return new ToolError(`no space left to write ${relPath}`)
    case "ENAMETOOLONG":
      return new ToolError(`${relPath}: the path is too long`)
    default:
      // Not worded from the error's own message: it may name absolute paths.
      return new ToolError(typeof code === "string" ? `${relPath}: the file system refused (${code})` : `${relPath}: the file operation failed`)
  }
}

function isInside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate)
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel))
}

function nearestExisting(root: string, target: string): string | undefined {
  for (let candidate = target; ; candidate = path.dirname(candidate)) {
    if (exists(candidate)) return candidate
    // A missing workspace has nothing below it either.
    if (candidate === root) return undefined
  }
}

function exists(file: string): boolean {
  try {
    lstatSync(file)
    return true
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === "ENOENT" || code === "ENOTDIR") return false
    throw err // worded by the caller's fsError
  }
}

function realpath(file: string, relPath: string): string {
  try {
    return realpathSync(file)
  } catch (err) {
    // lstat found it, so it is a dangling or looping symlink: writing through it would create
    // its target wherever that is.
    const code = (err as NodeJS.ErrnoException).code
    if (code === "ENOENT" || code === "ELOOP") throw new ToolError(`${relPath} goes through a broken symlink`)
    throw err
  }
}
