import type { ToolContext } from "../tool/tool.ts"

/** How far back a conversation is searched for the hosts its users named. */
const HISTORY_MESSAGES = 200

/**
 * Whether a fetch in a tainted run needs the user (fetch_url's guard): it does unless the URL's
 * host is one the users of this conversation named themselves, and the URL carries nothing in a
 * query — data smuggled out rides there (`?d=…`). A host a page named is no user's choice.
 */
export async function fetchNeedsUser(rawUrl: string, ctx: Pick<ToolContext, "history" | "conversation">): Promise<boolean> {
  let url: URL
  try {
    url = new URL(rawUrl)
  } catch {
    return true
  }
  if (url.search !== "" || url.username !== "" || url.password !== "") return true
  const host = url.hostname.toLowerCase().replace(/^www\./, "")
  const said = await ctx.history.recent(ctx.conversation, HISTORY_MESSAGES, 0)
  return !said.some((message) => message.role === "user" && namesHost(message.text.toLowerCase(), host))
}

/** `host` as a word of `text` (so "example.com" is not named by "badexample.com"). */
function namesHost(text: string, host: string): boolean {
  for (let at = text.indexOf(host); at >= 0; at = text.indexOf(host, at + 1)) {
    const before = text[at - 1]
    const after = text[at + host.length]
    if ((before === undefined || !/[a-z0-9.-]/.test(before)) && (after === undefined || !/[a-z0-9-]/.test(after) || (after === "." && !/[a-z0-9]/.test(text[at + host.length + 1] ?? "")))) return true
  }
  return false
}
