import { readdir, readFile } from "node:fs/promises"
import path from "node:path"
import type { UserId } from "../core/types.ts"
import { localDay } from "../memory/dates.ts"
import { DAILY_FOLDER, LONG_TERM_FILE } from "../memory/notes.ts"
import type { MemoryService } from "../tool/capabilities.ts"
import { ToolError } from "../tool/tool.ts"
import type { QuotaGuard } from "./quota-guard.ts"

/** Notes remembered on `now`'s day in a memory folder: that day's daily notes (conversation
 *  summaries are not remembered notes) and memory.md entries under that day's heading. Read from
 *  the notes themselves, so a restart or another process counts the same. */
export async function notesOn(folder: string, now: Date): Promise<number> {
  const day = localDay(now)
  const names = await readdir(path.join(folder, DAILY_FOLDER)).catch(() => [] as string[])
  const daily = names.filter((name) => name.startsWith(`${day}-`) && name.endsWith(".md") && !name.endsWith("-conversation-summary.md")).length
  const longTerm = await readFile(path.join(folder, LONG_TERM_FILE), "utf8").catch(() => "")
  const entries = longTerm.split("\n").filter((line) => line === `## ${day}`).length
  return daily + entries
}

/** The memory capability with QUOTA_MEMORY_NOTE_CHARS and QUOTA_MEMORY_NOTES_PER_DAY for users
 *  who are not owners; a note over either is a tool error the model relays. */
export function limitedMemory(memory: MemoryService, guard: QuotaGuard, folderOf: (user: UserId) => string): MemoryService {
  return {
    search: (user, search) => memory.search(user, search),
    async remember(user, content, longTerm) {
      if (guard.limited(user)) {
        const { memoryNoteChars, memoryNotesPerDay } = guard.quotas
        if (content.length > memoryNoteChars) throw new ToolError(`the note is ${content.length} characters; yours may hold at most ${memoryNoteChars} (QUOTA_MEMORY_NOTE_CHARS): keep the essentials`)
        const today = await notesOn(folderOf(user), new Date())
        if (today >= memoryNotesPerDay) throw new ToolError(`${today} notes were remembered for you today, the most allowed (QUOTA_MEMORY_NOTES_PER_DAY=${memoryNotesPerDay}); try again tomorrow`)
      }
      return memory.remember(user, content, longTerm)
    },
  }
}
