import type { MessageRecord } from "../store/records.ts"
import { percentDecoded } from "../core/percent-decoded.ts"
import type { ToolContext } from "../tool/tool.ts"
import { withoutEnvelopes } from "./envelope.ts"

/** How far back a conversation is searched for the hosts its users named. */
const HISTORY_MESSAGES = 200

/** The tools whose answers are the web's: the links in them were written before the run read
 *  anything of the user's, so a path taken from them carries nothing out. */
const WEB_TOOLS = new Set(["fetch_url", "web_search"])

/**
 * Whether a fetch in a tainted run needs the user (fetch_url's guard). It does not when the
 * URL's host is one the users of this conversation named themselves, it carries nothing in a
 * query or credentials — data smuggled out rides there (`?d=…`) — and its path is no new
 * writing either: none, one a user wrote, or one the web gave the run (a link on a page it
 * fetched, a search hit). Data rides in a path as well as in a query (`/collect/<secret>`), and
 * a named host may be the attacker's own. A host a page named is no user's choice, nor one
 * named inside outside content a user passed on (a forwarded message).
 */
export async function fetchNeedsUser(rawUrl: string, ctx: Pick<ToolContext, "history" | "conversation">, read: readonly MessageRecord[] = []): Promise<boolean> {
  let url: URL
  try {
    url = new URL(rawUrl)
  } catch {
    return true
  }
  if (url.search !== "" || url.username !== "" || url.password !== "") return true
  const host = bare(url.hostname)
  const said = (await ctx.history.recent(ctx.conversation, HISTORY_MESSAGES, 0)).filter((message) => message.role === "user").map((message) => withoutEnvelopes(message.text))
  if (!said.some((text) => hostsIn(text).has(host))) return true
  const path = url.pathname.replace(/\/+$/, "")
  if (path === "") return false
  const spellings = [path, percentDecoded(path) ?? path]
  return ![...said, ...webTexts(read)].some((text) => spellings.some((spelling) => text.includes(spelling)))
}

/** The host names a text mentions (in URLs or bare: "example.com", "127.0.0.1"), as compared. */
function hostsIn(text: string): Set<string> {
  return new Set([...text.matchAll(/[a-z0-9-]+(?:\.[a-z0-9-]+)+/gi)].map((match) => bare(match[0])))
}

/** What the web answered the run: the results of its fetches and searches. */
function webTexts(records: readonly MessageRecord[]): string[] {
  return records.flatMap((record) =>
    record.message.role === "tool" ? record.message.content.flatMap((part) => (part.type === "tool-result" && WEB_TOOLS.has(part.toolName) ? [JSON.stringify(part.output)] : [])) : [],
  )
}

/** "www.Example.com" and "example.com." are example.com. */
const bare = (host: string) => host.toLowerCase().replace(/\.$/, "").replace(/^www\./, "")
