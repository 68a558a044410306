import { lstatSync, realpathSync } from "node:fs"
import { mkdir } from "node:fs/promises"
import path from "node:path"
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
 * worker's own folder, so nothing else is expected to plant links there.
 */
export function resolveInWorkspace(workspaceDir: string, relPath: string): string {
  if (relPath.trim() === "") throw new ToolError("path is empty; give a path relative to the workspace, e.g. notes/todo.md")
  if (relPath.includes("\0")) throw new ToolError("path contains a NUL byte")
  if (path.isAbsolute(relPath)) {
    throw new ToolError(`absolute paths are not allowed (${relPath}); give a path relative to the workspace`)
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

/** resolveInWorkspace for a tool call; creates the workspace folder on first use so a fresh data
 *  folder works without setup. */
export async function workspacePath(ctx: ToolContext, relPath: string): Promise<string> {
  await mkdir(ctx.workspaceDir, { recursive: true })
  return resolveInWorkspace(ctx.workspaceDir, relPath)
}

/** How paths are shown to the model: relative to the workspace, with "/" on every platform. */
export function workspaceRelative(workspaceDir: string, absPath: string): string {
  return path.relative(path.resolve(workspaceDir), absPath).split(path.sep).join("/") || "."
}

/** A path argument normalised for permission rules, so "a/./b" and "a/x/../b" match rules for "a/b". */
export function pathPattern(relPath: string): string {
  return path.posix.normalize(relPath.replaceAll("\\", "/"))
}

/** Filesystem failures the model can act on become ToolErrors; anything else is returned as is. */
export function fsError(err: unknown, relPath: string): unknown {
  switch ((err as NodeJS.ErrnoException).code) {
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
    default:
      return err
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
    throw err
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
