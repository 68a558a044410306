import { createHash, randomBytes } from "node:crypto"

/**
 * The provenance envelope: what the model reads that neither the user nor the owner's
 * configuration wrote — a web page, search results, a file's text, an MCP server's answer, a
 * Worker's report, a model-written memory note — is put between markers the content cannot
 * close. Each envelope's boundary is random, so no text written before it was made can name
 * it; and the markers Steward gives meaning to (this envelope's, and the task report's) are
 * defused inside, so content cannot forge structure around itself either (OWASP LLM01). The
 * prompts say that what is inside is data, never instructions (prompts/untrusted-content.md).
 */

const OPEN = "<untrusted-content"
const CLOSE = "</untrusted-content"

/** Markup Steward's prompts give meaning to: `<untrusted-content>`, `<task-results>`, `<task …>`,
 *  `<task_metadata>`, `<system-reminder>`, `<memory>`, `<env>` — opening or closing. */
const MARKERS = ["untrusted-content", "task-results", "task_metadata", "task", "system-reminder", "memory", "env"]

/** What a model may read as "<": the character, its full-width and small forms, HTML's entities
 *  and a JSON or JavaScript escape. */
const ANGLE = String.raw`(?:<|\uFF1C|\uFE64|&lt;?|&#0*60;?|&#x0*3c;?|\\u003c|\\x3c)`
/** What a model may skip over: spaces (also as JSON escapes: a tool's answer is JSON), and
 *  characters that print as nothing (zero-width space, joiners, the BOM, the soft hyphen —
 *  format characters). */
const INVISIBLE = String.raw`(?:[\s\p{Cf}]|\\[nrt])*`
/** "/" and its full-width form. */
const SLASH = String.raw`(?:\/|\uFF0F)?`
/** A marker's name with invisible characters allowed between its letters. */
const spelled = (name: string) => [...name].map((char) => char.replace(/[-_]/, "[-_]")).join(String.raw`\p{Cf}*`)

/** Every spelling of an opening or closing marker: the angle, then what follows it up to the name. */
const STRUCTURE = new RegExp(`${ANGLE}(${INVISIBLE}${SLASH}${INVISIBLE}(?:${MARKERS.map(spelled).join("|")}))(?![a-z0-9])`, "giu")

/** `text` with every marker of Steward's structure defused (its "<", in whatever spelling,
 *  becomes "‹"), so it reads the same to a person and means nothing to the prompt's structure. */
export function defused(text: string): string {
  return text.replace(STRUCTURE, "‹$1")
}

/** `content` in an envelope naming where it came from (`source`: a tool, "worker report", …).
 *  The boundary is random, or `stable` — derived from the content — for text that must be the
 *  same bytes at every call (the system prompt's memory.md, for the provider's prompt cache). */
export function untrusted(source: string, content: string, { stable = false } = {}): string {
  const boundary = stable ? createHash("sha256").update(content).digest("hex").slice(0, 16) : randomBytes(8).toString("hex")
  const from = defused(source).replace(/["\n]/g, "'")
  return `${OPEN} source="${from}" boundary="${boundary}">\n${defused(content)}\n${CLOSE} boundary="${boundary}">`
}

/** True when `text` holds an envelope: whoever reads it has read untrusted content. */
export function holdsUntrusted(text: string): boolean {
  return text.includes(`${OPEN} source=`)
}

/** True when `text` is one whole envelope, as untrusted() makes it: opened and closed with the
 *  same boundary, and nothing around. */
export function isEnvelope(text: string): boolean {
  const open = /^<untrusted-content source="[^"\n]*" boundary="([0-9a-f]+)">\n/.exec(text)
  return open !== null && text.endsWith(`\n${CLOSE} boundary="${open[1]}">`)
}

/** `text` with every envelope left out, markers and content: what its writer said themselves. */
export function withoutEnvelopes(text: string): string {
  return text.replace(/<untrusted-content source="[^"]*" boundary="([0-9a-f]+)">[\s\S]*?<\/untrusted-content boundary="\1">/g, "")
}

/** The text of every envelope in `text` without its markers, for a person to read. */
export function unwrapped(text: string): string {
  return text.replace(/<untrusted-content source="[^"]*" boundary="[0-9a-f]+">\n?/g, "").replace(/\n?<\/untrusted-content boundary="[0-9a-f]+">/g, "")
}
