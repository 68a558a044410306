import { readdirSync, readFileSync } from "node:fs"
import { basename, join } from "node:path"
import matter from "gray-matter"
import { z } from "zod"
import type { CommandInfo } from "../core/types.ts"
import { markParts, unmarked, type TemplatePart } from "./template-parts.ts"

/**
 * A command defined as a file, `prompts/commands/<name>.md` (seed 001): the body is a template
 * (arguments as `$1`, `$ARGUMENTS`; references `[[path]]`, `[[worker]]`, `` !`command` ``),
 * `agent` the role or worker type it runs, `subtask` whether it runs as a task of its own
 * (without a model deciding to delegate) rather than as a message to the Teller.
 */
export interface FileCommand {
  name: string
  description: string
  /** "teller", "planner" or a worker type. */
  agent: string
  subtask: boolean
  /** The body, its references (`[[…]]`, `` !`…` ``) replaced by markers (see template-parts.ts). */
  template: string
  parts: TemplatePart[]
}

/** What a typed message asks for, before anything runs. */
export type Parsed =
  | { kind: "help" }
  | { kind: "tasks" }
  | { kind: "cancel"; id: string | undefined }
  | { kind: "pause"; id: string | undefined }
  | { kind: "resume"; id: string | undefined }
  | { kind: "stop" }
  | { kind: "timezone"; zone: string | undefined }
  | { kind: "memory" }
  | { kind: "new" }
  | { kind: "pairing"; args: string[] }
  | { kind: "file"; command: FileCommand; prompt: string }
  /** `@<worker-type> text`: straight to that worker type (seed 003 §2). */
  | { kind: "worker"; agent: string; prompt: string }

export const BUILT_IN: CommandInfo[] = [
  { name: "help", description: "List the commands" },
  { name: "tasks", description: "List this conversation's queued and running tasks and schedules" },
  { name: "cancel", description: "Cancel a task or schedule: /cancel <id>" },
  { name: "new", description: "Start a fresh conversation (the old one stays in memory)" },
  { name: "pairing", description: "Owner only: /pairing approve <code>, /pairing list", ownerOnly: true },
  { name: "pause", description: "Pause a schedule: /pause <id>" },
  { name: "resume", description: "Resume a paused schedule (without catching up): /resume <id>" },
  { name: "stop", description: "Stop everything running in this conversation: the reply and all tasks" },
  { name: "timezone", description: "Show or set your time zone: /timezone Europe/Berlin" },
  { name: "memory", description: "Show what I remember about you (memory.md and the latest notes)" },
]

const FrontMatter = z
  .object({
    description: z.string().min(1),
    agent: z.string().min(1).optional(),
    subtask: z.boolean().optional(),
  })
  .strict()

/** Telegram's rule for command names, which Slack accepts too. */
const NAME = /^[a-z0-9_]{1,32}$/

/** Reads the command files; a bad file stops start-up with its name and the problem. */
export function loadCommands(dir: string, agents: ReadonlySet<string>): FileCommand[] {
  const commands: FileCommand[] = []
  for (const file of list(dir).filter((f) => f.endsWith(".md")).sort()) {
    const name = basename(file, ".md")
    const where = `prompts/commands/${file}`
    if (!NAME.test(name)) throw new Error(`${where}: a command name is 1-32 lowercase letters, digits or _`)
    if (BUILT_IN.some((c) => c.name === name)) throw new Error(`${where}: /${name} is a built-in command`)
    const parsed = matter(readFileSync(join(dir, file), "utf8"))
    const front = FrontMatter.safeParse(parsed.data)
    if (!front.success) throw new Error(`${where}: ${front.error.issues.map((i) => `${i.path.join(".") || "front matter"}: ${i.message}`).join("; ")}`)
    const agent = front.data.agent ?? "teller"
    if (!agents.has(agent)) throw new Error(`${where}: agent "${agent}" is not teller, planner or a worker type (${[...agents].join(", ")})`)
    // Seed 001: a sub-agent runs as a subtask unless the command says otherwise.
    const subtask = agent !== "teller" && front.data.subtask !== false
    const { marked, parts } = markParts(parsed.content.trim())
    commands.push({ name, description: front.data.description, agent, subtask, template: marked, parts })
  }
  return commands
}

/** Recognises a command; anything else (including an unknown /word) is an ordinary message. */
export function parseCommand(text: string, commands: readonly FileCommand[], workerTypes: ReadonlySet<string>): Parsed | undefined {
  const trimmed = text.trim()
  const mention = /^@([\w-]+)\s+([\s\S]+)$/.exec(trimmed)
  if (mention && workerTypes.has(mention[1]!)) return { kind: "worker", agent: mention[1]!, prompt: mention[2]!.trim() }
  // "/cmd@BotName args" is how Telegram sends commands picked from the menu in groups.
  const match = /^\/([a-z0-9_]+)(?:@\S+)?(?:\s+([\s\S]*))?$/i.exec(trimmed)
  if (!match) return undefined
  const name = match[1]!.toLowerCase()
  // A marker in what the user typed could stand for one of the owner's shell commands.
  const rest = unmarked(match[2] ?? "").trim()
  const args = splitArguments(rest)
  switch (name) {
    case "help":
      return { kind: "help" }
    case "tasks":
      return { kind: "tasks" }
    case "cancel":
      return { kind: "cancel", id: args[0] }
    case "pause":
    case "resume":
      return { kind: name, id: args[0] }
    case "stop":
      return { kind: "stop" }
    case "timezone":
      return { kind: "timezone", zone: args[0] }
    case "memory":
      return { kind: "memory" }
    case "new":
      return { kind: "new" }
    case "pairing":
      return { kind: "pairing", args }
  }
  const command = commands.find((c) => c.name === name)
  return command ? { kind: "file", command, prompt: expandTemplate(command.template, rest, args) } : undefined
}

/** OpenCode's template rules: `$1…$N` are the arguments (the last placeholder takes the rest),
 *  `$ARGUMENTS` all of them; a template with no placeholder gets the arguments appended. */
export function expandTemplate(template: string, raw: string, args: readonly string[]): string {
  const placeholders = [...template.matchAll(/\$(\d+)/g)].map((m) => Number(m[1]))
  const last = placeholders.length > 0 ? Math.max(...placeholders) : 0
  let out = template.replace(/\$(\d+)/g, (_, n: string) => {
    const index = Number(n) - 1
    return Number(n) === last ? args.slice(index).join(" ") : (args[index] ?? "")
  })
  const usesArguments = out.includes("$ARGUMENTS")
  out = out.replaceAll("$ARGUMENTS", raw)
  if (placeholders.length === 0 && !usesArguments && raw) out = `${out}\n\n${raw}`
  return out.trim()
}

/** Words, with "quoted phrases" kept together. */
function splitArguments(text: string): string[] {
  return [...text.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!)
}

function list(dir: string): string[] {
  try {
    return readdirSync(dir)
  } catch {
    return []
  }
}
