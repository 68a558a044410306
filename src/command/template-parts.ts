import { spawn } from "node:child_process"
import { constants } from "node:fs"
import { mkdir, open } from "node:fs/promises"
import { ToolError } from "../tool/tool.ts"
import { untrusted } from "../trust/envelope.ts"
import { resolveInWorkspace } from "../tool/workspace.ts"

/** The most of a file `[[path]]` inlines, and of a command's output `` !`command` `` does. */
export const MAX_PART_CHARS = 20_000
/** How long `` !`command` `` may run before it and its children are stopped. */
export const COMMAND_TIMEOUT_MS = 30_000

/** A reference in the owner's command file, resolved when the command is used. */
export type TemplatePart = { kind: "include"; name: string } | { kind: "shell"; command: string }

/** What a command's references are resolved against: the user's workspace folder, the worker types. */
export interface PartContext {
  workspace: string
  workerTypes: ReadonlySet<string>
}

// A NUL cannot come from a user: arguments lose theirs before they are put in the template.
const marker = (index: number) => `\0${index}\0`
const MARKED = /\0(\d+)\0/g

/**
 * Takes the references out of a command file's template (seed 000 step 8): `[[path]]`,
 * `[[worker]]` and `` !`command` `` become markers, so that arguments put in the template later
 * can never add one — a shell command comes only from the owner's file.
 */
export function markParts(template: string): { marked: string; parts: TemplatePart[] } {
  const parts: TemplatePart[] = []
  const marked = template.replace(/!`([^`\n]+)`|\[\[([^\]\n]+)\]\]/g, (_, command: string | undefined, name: string | undefined) => {
    parts.push(command !== undefined ? { kind: "shell", command } : { kind: "include", name: name!.trim() })
    return marker(parts.length - 1)
  })
  return { marked, parts }
}

/** Removes what could pass for a marker from text a user typed. */
export function unmarked(text: string): string {
  return text.replaceAll("\0", "")
}

/**
 * The prompt with each marker replaced: a worker type's name by a reference to that worker (the
 * agent delegates to it); a path by the file's content from the user's workspace (confined like
 * read_file, cut at 20,000 characters); a shell command by its output. A failure is written in
 * the prompt in place of the part, never thrown.
 */
export async function resolveParts(prompt: string, parts: readonly TemplatePart[], context: PartContext): Promise<string> {
  if (parts.length === 0) return prompt
  const resolved = await Promise.all(parts.map((part) => resolvePart(part, context)))
  return prompt.replace(MARKED, (_, index: string) => resolved[Number(index)] ?? "")
}

/** A file's text and a command's output are outside content, like read_file's: the owner wrote
 *  the template, not what a file of the workspace (an upload, a page a Worker saved) or a
 *  command's output (a feed, a repository's log) holds. They come in envelopes (taint). */
async function resolvePart(part: TemplatePart, context: PartContext): Promise<string> {
  if (part.kind === "shell") return untrusted(`output of !\`${part.command}\``, await runShell(part.command, context.workspace))
  if (context.workerTypes.has(part.name)) return `the ${part.name} worker (delegate this to the worker type "${part.name}")`
  try {
    const text = await readCapped(resolveInWorkspace(context.workspace, part.name))
    return untrusted(`file ${part.name}`, text)
  } catch (error) {
    // A name that is neither a file nor a worker type may be a misspelt worker: the owner sees both.
    const missing = `no such file in the workspace, nor a worker type (${[...context.workerTypes].join(", ")})`
    const reason = error instanceof ToolError || error instanceof NotAFile ? error.message : (error as NodeJS.ErrnoException).code === "ENOENT" ? missing : String((error as Error).message ?? error)
    return `[[${part.name}]: could not be read: ${reason}]`
  }
}

/** A folder, a pipe or a device is not inlined (a pipe's read would wait for a writer forever). */
class NotAFile extends Error {}

async function readCapped(path: string): Promise<string> {
  // Not blocking: opening a pipe that no one writes to must not hold the command up.
  const file = await open(path, constants.O_RDONLY | constants.O_NONBLOCK)
  try {
    if (!(await file.stat()).isFile()) throw new NotAFile("not a file")
    // Four bytes a character at most: enough bytes for the cap, whatever the text.
    const buffer = Buffer.alloc(MAX_PART_CHARS * 4 + 4)
    const { bytesRead } = await file.read(buffer, 0, buffer.length, 0)
    const size = (await file.stat()).size
    const text = buffer.subarray(0, bytesRead).toString("utf8")
    return capped(text, size > bytesRead)
  } finally {
    await file.close()
  }
}

function capped(text: string, more: boolean): string {
  if (text.length <= MAX_PART_CHARS && !more) return text
  return `${text.slice(0, MAX_PART_CHARS)}\n[… cut at ${MAX_PART_CHARS} characters]`
}

/**
 * Runs an owner's command with `sh` in the user's workspace folder, with only PATH and HOME
 * of Steward's environment (its keys stay out). After 30 s the command and every process it
 * started are stopped (it leads a process group of its own).
 */
export async function runShell(command: string, cwd: string, timeoutMs = COMMAND_TIMEOUT_MS): Promise<string> {
  await mkdir(cwd, { recursive: true })
  return new Promise((resolve) => {
    const child = spawn("sh", ["-c", command], { cwd, detached: true, stdio: ["ignore", "pipe", "pipe"], env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? cwd } })
    let output = ""
    let more = false
    const take = (chunk: Buffer) => {
      if (output.length >= MAX_PART_CHARS) return void (more = true)
      output += chunk.toString("utf8")
    }
    child.stdout.on("data", take)
    child.stderr.on("data", take)
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      stopGroup(child.pid)
    }, timeoutMs)
    const finish = (outcome: string | undefined) => {
      clearTimeout(timer)
      const text = capped(output.trimEnd(), more || output.length > MAX_PART_CHARS)
      resolve(outcome ? `[!\`${command}\` ${outcome}]${text ? `\n${text}` : ""}` : text)
    }
    child.on("error", (error) => finish(`could not run: ${error.message}`))
    child.on("close", (code, signal) => {
      // The group may outlive the shell (a background child): it goes with it.
      stopGroup(child.pid)
      if (timedOut) finish(`was stopped after ${timeoutMs / 1000} s`)
      else if (code !== 0) finish(signal ? `ended by ${signal}` : `failed with exit code ${code}`)
      else finish(undefined)
    })
  })
}

function stopGroup(pid: number | undefined): void {
  if (pid === undefined) return
  try {
    process.kill(-pid, "SIGKILL")
  } catch {
    // Already gone.
  }
}
