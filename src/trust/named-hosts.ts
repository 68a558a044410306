import type { ToolContext } from "../tool/tool.ts"
import { withoutEnvelopes } from "./envelope.ts"

/** How far back a conversation is searched for the hosts its users named. */
const HISTORY_MESSAGES = 200

/**
 * Whether a fetch in a tainted run needs the user (fetch_url's guard): it does unless the URL's
 * host is one the users of this conversation named themselves, and the URL carries nothing in a
 * query — data smuggled out rides there (`?d=…`). A host a page named is no user's choice, nor
 * one named inside outside content a user passed on (a forwarded message).
 */
export async function fetchNeedsUser(rawUrl: string, ctx: Pick<ToolContext, "history" | "conversation">): Promise<boolean> {
  let url: URL
  try {
    url = new URL(rawUrl)
  } catch {
    return true
  }
  if (url.search !== "" || url.username !== "" || url.password !== "") return true
  const host = bare(url.hostname)
  const said = await ctx.history.recent(ctx.conversation, HISTORY_MESSAGES, 0)
  return !said.some((message) => message.role === "user" && hostsIn(withoutEnvelopes(message.text)).has(host))
}

/** The host names a text mentions (in URLs or bare: "example.com", "127.0.0.1"), as compared. */
function hostsIn(text: string): Set<string> {
  return new Set([...text.matchAll(/[a-z0-9-]+(?:\.[a-z0-9-]+)+/gi)].map((match) => bare(match[0])))
}

/** "www.Example.com" and "example.com." are example.com. */
const bare = (host: string) => host.toLowerCase().replace(/\.$/, "").replace(/^www\./, "")
