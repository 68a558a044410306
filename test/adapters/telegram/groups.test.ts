import type { Message } from "grammy/types"
import { describe, expect, it } from "vitest"
import { inboundOfMessage } from "../../../adapters/telegram/updates.ts"

const BOT = "steward_bot"
const GROUP = -100555
const noFiles = () => Promise.reject(new Error("no files here"))

function groupMessage(text: string, extra: Partial<Message> = {}): Message {
  return { message_id: 7, date: 0, chat: { id: GROUP, type: "supergroup", title: "Team" }, from: { id: 31, is_bot: false, first_name: "Ann" }, text, ...extra } as Message
}

const take = (message: Message) => inboundOfMessage(1, message, BOT, noFiles)

describe("Telegram groups: Steward takes what is addressed to it", () => {
  it("a message naming @bot, as its author's, without the mention", () => {
    expect(take(groupMessage(`@${BOT} what is due today?`))).toEqual({ conversation: `telegram:${GROUP}`, user: "telegram:31", text: "what is due today?", eventId: "telegram:1" })
    expect(take(groupMessage(`thanks @Steward_Bot`))?.text).toBe("thanks")
  })

  it("a command for it (or for no bot in particular), and a reply to one of its messages", () => {
    expect(take(groupMessage(`/tasks@${BOT}`))?.text).toBe("/tasks")
    expect(take(groupMessage("/stop"))?.text).toBe("/stop")
    const reply = groupMessage("yes please", { reply_to_message: { message_id: 3, date: 0, chat: { id: GROUP, type: "supergroup", title: "Team" }, from: { id: 99, is_bot: true, first_name: "Steward", username: BOT } } as never })
    expect(take(reply)?.text).toBe("yes please")
  })

  it("leaves the group's other talk alone: plain messages, another bot's command, a reply to someone else, a name that only starts like the bot's", () => {
    expect(take(groupMessage("lunch at noon?"))).toBeUndefined()
    expect(take(groupMessage("/start@other_bot"))).toBeUndefined()
    expect(take(groupMessage("agreed", { reply_to_message: { message_id: 3, date: 0, chat: { id: GROUP, type: "supergroup", title: "Team" }, from: { id: 32, is_bot: false, first_name: "Bo" } } as never }))).toBeUndefined()
    expect(take(groupMessage(`ask @${BOT}_fan`))).toBeUndefined()
  })

  it("takes no channel posts", () => {
    expect(take({ ...groupMessage(`@${BOT} hi`), chat: { id: -100666, type: "channel", title: "News" } } as Message)).toBeUndefined()
  })
})
