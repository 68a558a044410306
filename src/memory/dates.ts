/**
 * Notes are dated by the local calendar day of the Steward process (set TZ to the user's
 * zone): that is what "today" means to the person reading the folder.
 */

const pad = (n: number, width = 2) => String(n).padStart(width, "0")

/** YYYY-MM-DD of the local day `date` falls on. */
export function localDay(date: Date): string {
  return `${pad(date.getFullYear(), 4)}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`
}

/** HH:MM, local. */
export function localTime(date: Date): string {
  return `${pad(date.getHours())}:${pad(date.getMinutes())}`
}

/** True for a real calendar day written as YYYY-MM-DD (rejects 2026-02-30). */
export function isCalendarDay(day: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) return false
  const date = new Date(`${day}T00:00:00Z`)
  return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(day)
}
