import { createHash } from "node:crypto"
import path from "node:path"

/** Longest note slug, in characters; a CJK slug stays far below the 255-byte name limit. */
export const MAX_SLUG_LENGTH = 48
const FALLBACK_SLUG = "note"
const SLUG_CHAR = /^[a-z0-9\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}ー]$/u

/**
 * The name part of a daily note, from its content: lowercase Latin letters (accents dropped),
 * CJK characters and digits, everything else collapsed to single dashes. Built by keeping
 * allowed characters rather than removing bad ones, so a separator, a dot (and with it `..`)
 * or a control character can never get through.
 */
export function slugify(content: string): string {
  const folded = content
    .normalize("NFKC")
    .toLowerCase()
    .replace(/\p{sc=Latin}/gu, (c) => c.normalize("NFD").replace(/\p{M}+/gu, ""))
  const slug = Array.from(folded, (c) => (SLUG_CHAR.test(c) ? c : "-"))
    .join("")
    .replace(/-+/g, "-")
    .replace(/^-|-$/g, "")
  return truncate(slug) || FALLBACK_SLUG
}

/** Cuts at the last dash when that keeps at least half the slug, so words are not chopped. */
function truncate(slug: string): string {
  const chars = Array.from(slug)
  if (chars.length <= MAX_SLUG_LENGTH) return slug
  const cut = chars.slice(0, MAX_SLUG_LENGTH)
  const lastDash = cut.lastIndexOf("-")
  const kept = chars[MAX_SLUG_LENGTH] !== "-" && lastDash >= MAX_SLUG_LENGTH / 2 ? cut.slice(0, lastDash) : cut
  return kept.join("").replace(/-+$/, "")
}

const MAX_FOLDER_NAME = 120

/**
 * The folder of one user's memory: `telegram:1001` → `telegram-1001`. Injective, so two users
 * never share a folder: `:` is the only character written as `-`, a literal `-` and every other
 * character outside [A-Za-z0-9_] are percent-encoded (UTF-8), and `%` itself is encoded. Very
 * long ids keep a readable prefix plus a hash of the whole id (`~` cannot occur otherwise).
 * Case matters, so on a case-insensitive filesystem ids differing only in case would collide.
 */
export function folderName(user: string): string {
  if (user === "") throw new Error("memory: the user id is empty")
  const encoded = Array.from(user, (c) => (c === ":" ? "-" : /^[A-Za-z0-9_]$/.test(c) ? c : percentEncode(c))).join("")
  if (encoded.length <= MAX_FOLDER_NAME) return encoded
  return `${encoded.slice(0, 80)}~${createHash("sha256").update(user).digest("hex").slice(0, 32)}`
}

function percentEncode(char: string): string {
  return Array.from(Buffer.from(char, "utf8"), (byte) => `%${byte.toString(16).toUpperCase().padStart(2, "0")}`).join("")
}

const SHARED_FOLDER = "shared"

/** A user's memory folder under `dir` (everyone's one folder when the scope is shared). */
export function memoryFolder(dir: string, scope: "user" | "shared", user: string): string {
  return path.join(dir, scope === "shared" ? SHARED_FOLDER : folderName(user))
}
