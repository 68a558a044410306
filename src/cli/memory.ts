import { join } from "node:path"
import type { Command } from "commander"
import { dataDirOf } from "../config/config.ts"
import { CliError, clip, config, hasData, print, setting } from "./common.ts"

const MAX_HITS = 50

export function registerMemory(program: Command): void {
  const memory = program.command("memory").description("Steward's Markdown memory")
  memory
    .command("search <query...>")
    .description("search a user's notes as the search_memory tool does")
    .option("--user <channel:id>", "whose notes (default: the only owner in ALLOWED_USERS; not needed with MEMORY_SCOPE=shared)")
    .option("--limit <n>", `how many hits (1-${MAX_HITS})`, "10")
    .action(async (words: string[], options: { user?: string; limit: string }, command: Command) => {
      // Lexical search only: no model is asked, so MODEL need not be set.
      const settings = { dataDir: dataDirOf(), memoryScope: setting("MEMORY_SCOPE"), allowedUsers: setting("ALLOWED_USERS") }
      const limit = Number(options.limit)
      if (!Number.isInteger(limit) || limit < 1 || limit > MAX_HITS) throw new CliError(`--limit is a whole number from 1 to ${MAX_HITS}`, 2)
      const owners = [...settings.allowedUsers.users]
      const user = options.user ?? (settings.memoryScope === "shared" ? "shared" : owners.length === 1 ? owners[0] : undefined)
      if (!user) throw new CliError("whose notes? give --user <channel:id>", 2)
      const query = words.join(" ")
      if (!/[\p{L}\p{N}]/u.test(query)) throw new CliError("the query has no words to search for", 2)
      const dir = join(settings.dataDir, "memory")
      // A Steward that has run but kept no note yet has a store and no memory folder: no hits.
      const noted = hasData(settings.dataDir, dir)
      if (!noted && !hasData(settings.dataDir, join(settings.dataDir, "steward.sqlite"))) throw new CliError(`no Steward data in ${settings.dataDir} (set DATA_DIR to where Steward keeps it)`)
      const hits = noted ? await searchNotes(dir, settings.memoryScope, user, query, limit) : []
      print(command, hits, () => (hits.length === 0 ? `nothing found for "${query}"\n` : hits.map((hit) => `${hit.source}  (${hit.score.toFixed(2)})\n  ${clip(hit.content, 200)}\n`).join("")))
    })
  memory
    .command("reindex")
    .description("embed every memory note again with EMBEDDING_MODEL, now")
    .action(async () => {
      const { reindexMemory } = await import("../memory/reindex.ts")
      const code = await reindexMemory(config(), (line) => process.stdout.write(`${line}\n`), (line) => process.stderr.write(`${line}\n`))
      if (code !== 0) throw new CliError("reindexing did not complete", code)
    })
}

/** One search, no watcher; the search libraries are loaded by the memory commands only, not by every command. */
async function searchNotes(dir: string, scope: "user" | "shared", user: string, query: string, limit: number) {
  const { Memory } = await import("../memory/memory.ts")
  const notes = new Memory({ dir, scope, watch: false })
  return notes.search(user, { query, limit }).finally(() => notes.close())
}
