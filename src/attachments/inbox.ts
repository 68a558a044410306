import { readdir } from "node:fs/promises"
import path from "node:path"

/** A user's inbox folder for `now`'s day: where the files they send that day are saved. */
export function inboxOn(userDir: string, now: Date): string {
  return path.join(userDir, "inbox", localDate(now))
}

/** Files saved into a user's inbox on `now`'s day (QUOTA_UPLOADS_PER_DAY counts them). */
export async function uploadsOn(userDir: string, now: Date): Promise<number> {
  return (await readdir(inboxOn(userDir, now)).catch(() => [])).length
}

/** YYYY-MM-DD in the server's time zone: the day the user sees on their own clock, most often. */
function localDate(now: Date): string {
  return [now.getFullYear(), now.getMonth() + 1, now.getDate()].map((n) => String(n).padStart(2, "0")).join("-")
}
