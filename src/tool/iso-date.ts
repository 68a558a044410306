import { ToolError } from "./tool.ts"

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i

/**
 * Parses an ISO 8601 date or date-time given to a tool; without a zone it is local time. A bare
 * date is a whole day, so as a lower bound it means its first millisecond and as an upper
 * bound (`bound: "end"`) its last: `before: "2026-11-22"` includes all of the 22nd.
 */
export function parseIsoDate(value: string, name: string, bound: "start" | "end" = "start"): Date {
  const match = ISO.exec(value.trim())
  const date = match && toDate(match, bound)
  if (!date) throw new ToolError(`${name}: "${value}" is not an ISO 8601 date; use e.g. 2026-11-22 or 2026-11-22T14:30:00Z`)
  return date
}

/** Parses an optional `after`/`before` pair (both inclusive) and checks their order. */
export function parseRange(after: string | undefined, before: string | undefined): { after?: Date; before?: Date } {
  const range = {
    after: after === undefined ? undefined : parseIsoDate(after, "after"),
    before: before === undefined ? undefined : parseIsoDate(before, "before", "end"),
  }
  if (range.after && range.before && range.after > range.before) throw new ToolError(`after (${after}) is later than before (${before})`)
  return range
}

function toDate(match: RegExpExecArray, bound: "start" | "end"): Date | undefined {
  const [, y, mo, d, h, mi, s, fraction, zone] = match
  const [year, month, day] = [Number(y), Number(mo) - 1, Number(d)]
  const [hour, minute, second] = [Number(h ?? 0), Number(mi ?? 0), Number(s ?? 0)]
  const offset = zone === undefined ? 0 : offsetMinutes(zone)
  if (month < 0 || month > 11 || day < 1 || day > daysInMonth(year, month)) return undefined
  if (hour > 23 || minute > 59 || second > 59 || offset === undefined) return undefined
  const date = new Date(0)
  if (h === undefined) {
    // A whole local day; set field by field so DST days end at their real 23:59:59.999.
    date.setFullYear(year, month, day)
    if (bound === "end") date.setHours(23, 59, 59, 999)
    else date.setHours(0, 0, 0, 0)
    return date
  }
  const ms = Math.floor(Number(`0.${fraction ?? 0}`) * 1000)
  if (zone === undefined) {
    date.setFullYear(year, month, day)
    date.setHours(hour, minute, second, ms)
    return date
  }
  date.setUTCFullYear(year, month, day)
  date.setUTCHours(hour, minute, second, ms)
  return new Date(date.getTime() - offset * 60_000)
}

function daysInMonth(year: number, month: number): number {
  const last = new Date(0)
  last.setUTCFullYear(year, month + 1, 0)
  return last.getUTCDate()
}

function offsetMinutes(zone: string): number | undefined {
  if (zone.toUpperCase() === "Z") return 0
  const digits = zone.slice(1).replace(":", "")
  const [hours, minutes] = [Number(digits.slice(0, 2)), Number(digits.slice(2) || 0)]
  if (hours > 23 || minutes > 59) return undefined
  return (zone.startsWith("-") ? -1 : 1) * (hours * 60 + minutes)
}
