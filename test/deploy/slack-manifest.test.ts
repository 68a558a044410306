/**
 * deploy/slack-manifest.json against the code: every event it subscribes to is handled, every
 * event the code handles is subscribed, and it requests exactly the scopes of the Web API
 * methods, events and slash command the Slack adapter uses — read from the adapter's source, so
 * a new call or handler without its manifest line (or a scope nothing uses) fails here.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"

const manifest = JSON.parse(readFileSync("deploy/slack-manifest.json", "utf8")) as {
  features: { slash_commands?: Array<{ command: string }> }
  oauth_config: { scopes: { bot: string[] } }
  settings: { event_subscriptions: { bot_events: string[] } }
}
const source = readdirSync("adapters/slack")
  .filter((file) => file.endsWith(".ts"))
  .map((file) => readFileSync(join("adapters/slack", file), "utf8"))
  .join("\n")

const HISTORY = ["channels:history", "groups:history", "im:history", "mpim:history"]
/** What each Web API method needs of a bot token (Slack's method reference). A method the
 *  adapter calls that is missing here fails the test until its scopes are written down. */
const METHOD_SCOPES: Record<string, string[]> = {
  "auth.test": [],
  "chat.postMessage": ["chat:write"],
  "chat.update": ["chat:write"],
  "chat.delete": ["chat:write"],
  "chat.postEphemeral": ["chat:write"],
  // Streamed answers (chat.startStream, appendStream, stopStream) are posts: chat:write.
  "chat.startStream": ["chat:write"],
  "chat.appendStream": ["chat:write"],
  "chat.stopStream": ["chat:write"],
  // Steward posts in DMs, channels, private channels and group DMs, and looks its messages up there.
  "conversations.history": HISTORY,
  "conversations.replies": HISTORY,
  "conversations.open": ["im:write"],
  "reactions.add": ["reactions:write"],
  "reactions.remove": ["reactions:write"],
  "users.info": ["users:read"],
  "files.uploadV2": ["files:write"],
  "assistant.threads.setStatus": ["assistant:write"],
  "assistant.threads.setSuggestedPrompts": ["assistant:write"],
  "assistant.threads.setTitle": ["assistant:write"],
}
/** The scope each subscribed event needs, and the event type the adapter's handler sees. */
const EVENTS: Record<string, { scope: string; type: string }> = {
  app_mention: { scope: "app_mentions:read", type: "app_mention" },
  "message.im": { scope: "im:history", type: "message" },
  "message.channels": { scope: "channels:history", type: "message" },
  "message.groups": { scope: "groups:history", type: "message" },
  "message.mpim": { scope: "mpim:history", type: "message" },
  assistant_thread_started: { scope: "assistant:write", type: "assistant_thread_started" },
  assistant_thread_context_changed: { scope: "assistant:write", type: "assistant_thread_context_changed" },
}

/** Web API methods called on a client (`web.chat.postMessage(`, `this.web.files.uploadV2(`). */
function methodsUsed(): Set<string> {
  const methods = new Set<string>()
  for (const match of source.matchAll(/\b(?:web|client)\.((?:[a-z]+\.)+[a-zA-Z0-9]+)\(/g)) methods.add(match[1]!)
  return methods
}

/** Event types the adapter handles: `app.event("x"`, `app.event(/^(?:x|y)$/`, `app.message(`, Bolt's Assistant. */
function eventsHandled(): Set<string> {
  const handled = new Set<string>()
  for (const match of source.matchAll(/\.event\(\s*"([a-z_]+)"/g)) handled.add(match[1]!)
  for (const match of source.matchAll(/\.event\(\s*\/\^\(\?:([a-z_|]+)\)\$\//g)) for (const type of match[1]!.split("|")) handled.add(type)
  if (/\bapp\.message\(/.test(source)) handled.add("message")
  if (/\bthreadStarted\s*[:(,]/.test(source)) handled.add("assistant_thread_started")
  if (/\bthreadContextChanged\s*[:(,]/.test(source)) handled.add("assistant_thread_context_changed")
  return handled
}

describe("the Slack manifest matches the code", () => {
  const subscribed = manifest.settings.event_subscriptions.bot_events

  it("subscribes to the message events of every conversation kind the code follows threads in", () => {
    expect(subscribed).toEqual(expect.arrayContaining(["message.im", "message.channels", "message.groups", "message.mpim", "app_mention"]))
  })

  it("handles every event it subscribes to, and subscribes to every event it handles", () => {
    const handled = eventsHandled()
    for (const event of subscribed) {
      expect(EVENTS[event], `no entry for ${event} in this test's table`).toBeDefined()
      expect(handled, `${event} is subscribed but the adapter has no handler for ${EVENTS[event]!.type}`).toContain(EVENTS[event]!.type)
    }
    const types = new Set(subscribed.map((event) => EVENTS[event]?.type))
    for (const type of handled) expect(types, `the adapter handles ${type} but the manifest subscribes to no event of it`).toContain(type)
  })

  it("requests exactly the scopes of the methods, events, file downloads and slash command the code uses", () => {
    const needed = new Set<string>()
    for (const method of methodsUsed()) {
      expect(METHOD_SCOPES[method], `the adapter calls ${method}: add its scopes to this test's table`).toBeDefined()
      for (const scope of METHOD_SCOPES[method]!) needed.add(scope)
    }
    for (const event of subscribed) if (EVENTS[event]) needed.add(EVENTS[event]!.scope)
    // Files users share are downloaded from url_private with the bot token.
    if (source.includes("url_private")) needed.add("files:read")
    if ((manifest.features.slash_commands ?? []).length > 0) needed.add("commands")
    expect([...manifest.oauth_config.scopes.bot].sort()).toEqual([...needed].sort())
  })

  it("declares the slash command the code answers", () => {
    const command = /SLASH_COMMAND = "([^"]+)"/.exec(source)?.[1]
    expect(manifest.features.slash_commands?.map((c) => c.command)).toEqual([command])
  })
})
