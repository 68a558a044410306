/**
 * A renderer that fails (a defect, not the input's fault) must not make a send fail with an
 * error the outbox would retry: each adapter sends the text as escaped plain text instead, and
 * logs why. The failure is injected into the Markdown block parser both renderers share.
 */
import { Writable } from "node:stream"
import pino from "pino"
import { afterEach, describe, expect, it, vi } from "vitest"
import { SlackChannel } from "../../../adapters/slack/slack.ts"
import { TelegramChannel } from "../../../adapters/telegram/telegram.ts"
import { startSlackApi, type SlackApi } from "../../fakes/slack-api.ts"
import { startTelegramApi, type TelegramApi } from "../../fakes/telegram-api.ts"

vi.mock("../../../adapters/markdown/blocks.ts", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../../adapters/markdown/blocks.ts")>()
  return {
    ...original,
    parseBlocks: (markdown: string) => {
      if (markdown.includes("BOOM")) throw new RangeError("Maximum call stack size exceeded")
      return original.parseBlocks(markdown)
    },
  }
})

const TEXT = "BOOM: 1 < 2 & **not bold** `not code`"

function recordingLog() {
  const entries: Array<{ level: number; msg: string; conversation?: string }> = []
  const sink = new Writable({
    write(chunk, _encoding, done) {
      entries.push(JSON.parse(String(chunk)))
      done()
    },
  })
  return { log: pino({ level: "debug" }, sink), entries }
}

const closing: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const close of closing.splice(0)) await close()
})

describe("a renderer failure in the send path", () => {
  it("Telegram: sends and edits the text as escaped plain text, and logs the failure", async () => {
    const api: TelegramApi = await startTelegramApi()
    closing.push(() => api.close())
    const { log, entries } = recordingLog()
    const channel = new TelegramChannel({ botToken: api.token, apiRoot: `${api.apiRoot}/`, webhookPort: 0 }, log)
    const { messageId } = await channel.send("telegram:1001", { text: TEXT })
    expect(api.sent.at(-1)).toMatchObject({ text: TEXT })
    expect(api.sent.at(-1)?.entities).toBeUndefined()
    await channel.edit("telegram:1001", messageId, { text: `${TEXT} (edited)` })
    expect(api.sent.at(-1)).toMatchObject({ text: `${TEXT} (edited)` })
    expect(entries.filter((entry) => entry.level === 50).map((entry) => [entry.msg, entry.conversation])).toEqual([
      ["could not render the message as HTML; sending it as plain text", "telegram:1001"],
      ["could not render the message as HTML; sending it as plain text", "telegram:1001"],
    ])
    // A message the renderer can handle still goes out formatted.
    await channel.send("telegram:1001", { text: "**bold**" })
    expect(api.sent.at(-1)).toMatchObject({ text: "bold", entities: [{ type: "bold", offset: 0, length: 4 }] })
  })

  it("Slack: sends the text as escaped plain mrkdwn, buttons included, and logs the failure", async () => {
    const api: SlackApi = await startSlackApi()
    closing.push(() => api.close())
    const { log, entries } = recordingLog()
    const channel = new SlackChannel({ botToken: api.botToken, signingSecret: api.signingSecret, port: 3000, apiUrl: api.apiUrl }, log, { host: "127.0.0.1", port: 0 })
    const conversation = `slack:${api.team}:D0ALICE`
    await channel.send(conversation, { text: TEXT, buttons: [{ id: "yes", label: "Yes" }] })
    const escaped = "BOOM: 1 &lt; 2 &amp; **not bold** \u200B`\u200Bnot code\u200B`\u200B"
    expect(api.messages.at(-1)).toMatchObject({ text: escaped, blocks: [{ type: "section", text: { type: "mrkdwn", text: escaped } }, { type: "actions" }] })
    expect(entries.filter((entry) => entry.level === 50).map((entry) => [entry.msg, entry.conversation])).toEqual([
      ["could not render the message as mrkdwn; sending it as plain text", conversation],
    ])
  })
})
