import { readdirSync, readFileSync } from "node:fs"
import { basename, join } from "node:path"
import matter from "gray-matter"
import { z } from "zod"
import { ConfigError } from "../config/config.ts"
import type { Role } from "../core/types.ts"

export { environment } from "./environment.ts"

/** A role's prompt and, for worker types, what it may use. */
export interface Agent {
  name: string
  role: Role | "compaction"
  description: string
  prompt: string
  /** `<provider>:<model-id>` overriding the role's model. */
  model?: string
  /** Tool ids this agent is limited to (within what its role allows). */
  tools?: string[]
}

export interface Agents {
  teller: Agent
  planner: Agent
  compaction: Agent
  /** Worker types by name; "default" is prompts/worker.md. */
  workers: Map<string, Agent>
}

const FrontMatter = z
  .object({
    description: z.string().min(1),
    model: z.string().regex(/^[a-z-]+:.+$/, "expected <provider>:<model-id>").optional(),
    tools: z.array(z.string()).optional(),
  })
  .strict()

export const DEFAULT_WORKER = "default"
const WORKER_NAME = /^[a-z0-9][a-z0-9_-]*$/
const RESERVED = new Set(["teller", "planner", "compaction", DEFAULT_WORKER])
const UNTRUSTED_RULE = "untrusted-content.md"

/** Reads prompts/<role>.md and prompts/workers/<name>.md (front matter: description, model, tools).
 *  Every agent that acts (not compaction) ends with prompts/untrusted-content.md: the rule that
 *  what comes in an envelope is data, not instructions (src/trust/envelope.ts). */
export function loadAgents(dir: string): Agents {
  const rule = readFileSync(join(dir, UNTRUSTED_RULE), "utf8").trim()
  const acting = (prompt: string) => `${prompt}\n\n${rule}`
  const read = (file: string) => readFileSync(join(dir, file), "utf8").trim()
  const workers = new Map<string, Agent>([
    [DEFAULT_WORKER, { name: DEFAULT_WORKER, role: "worker", description: "General-purpose worker: web pages, files in its workspace.", prompt: acting(read("worker.md")) }],
  ])
  const workerDir = join(dir, "workers")
  for (const file of safeList(workerDir).filter((f) => f.endsWith(".md")).sort()) {
    const name = basename(file, ".md")
    const where = `prompts/workers/${file}`
    // The name is typed as @name and must not shadow a role, whose tools and model it would get.
    if (!WORKER_NAME.test(name) || RESERVED.has(name)) throw new ConfigError(where, `${where}: a worker type's name must be lowercase letters, digits, - or _, and not ${[...RESERVED].join(", ")}`)
    const parsed = matter(readFileSync(join(workerDir, file), "utf8"))
    const front = FrontMatter.safeParse(parsed.data)
    if (!front.success) throw new ConfigError(where, `${where}: ${front.error.issues.map((i) => `${i.path.join(".") || "front matter"}: ${i.message}`).join("; ")}`)
    workers.set(name, { name, role: "worker", prompt: acting(parsed.content.trim()), ...front.data })
  }
  return {
    teller: { name: "teller", role: "teller", description: "Talks to the user", prompt: acting(read("teller.md")) },
    planner: { name: "planner", role: "planner", description: "Plans and dispatches work", prompt: acting(read("planner.md")) },
    compaction: { name: "compaction", role: "compaction", description: "Summarises a session", prompt: read("compaction.md") },
    workers,
  }
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir)
  } catch {
    return []
  }
}
