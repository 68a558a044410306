import { autoRetry } from "@grammyjs/auto-retry"
import { Bot, GrammyError } from "grammy"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { renderTelegram } from "../../../adapters/telegram/render.ts"
import { callbackUpdate, startTelegramApi, textUpdate, type TelegramApi } from "../../fakes/telegram-api.ts"

const CHAT = 1001

let api: TelegramApi
let bot: Bot

beforeEach(async () => {
  api = await startTelegramApi()
  bot = new Bot(api.token, { client: { apiRoot: api.apiRoot } })
})

afterEach(async () => {
  await bot.stop()
  await api.close()
})

/** The GrammyError a call fails with; fails the test if the call succeeds or fails otherwise. */
async function refusal(call: Promise<unknown>): Promise<GrammyError> {
  const error = await call.then(
    () => undefined,
    (reason: unknown) => reason,
  )
  expect(error).toBeInstanceOf(GrammyError)
  return error as GrammyError
}

/** Starts long polling; resolves once the first getUpdates waits on the fake, with the promise of the polling loop. */
async function startPolling(): Promise<{ stopped: Promise<void> }> {
  const stopped = bot.start()
  await api.waitFor(() => api.requests.some((request) => request.method === "getUpdates"), 5000)
  return { stopped }
}

describe("fake Telegram API with the real grammY", () => {
  it("answers getMe", async () => {
    expect(await bot.api.getMe()).toEqual(api.me)
    await bot.init()
    expect(bot.botInfo.username).toBe(api.me.username)
  })

  it("sends a message and returns it as Telegram would, parsing HTML into entities", async () => {
    const keyboard = { inline_keyboard: [[{ text: "Yes", callback_data: "yes" }]] }
    const html = `<b>Hi</b> &amp; <a href="https://example.com/?a=1&amp;b=2">link</a> 😀 <pre><code class="language-ts">x</code></pre>`
    const message = await bot.api.sendMessage(CHAT, html, { parse_mode: "HTML", reply_markup: keyboard })
    expect(message.text).toBe("Hi & link 😀 x")
    expect(message.entities).toEqual([
      { type: "bold", offset: 0, length: 2 },
      { type: "text_link", offset: 5, length: 4, url: "https://example.com/?a=1&b=2" },
      { type: "pre", offset: 13, length: 1, language: "ts" },
    ])
    expect(message.chat.id).toBe(CHAT)
    expect(message.reply_markup).toEqual(keyboard)
    expect(api.sent).toEqual([message])
    expect(api.requests.at(-1)).toMatchObject({ method: "sendMessage", params: { chat_id: CHAT, text: html, parse_mode: "HTML" } })
  })

  it("enforces the 4096-character limit on the text after parsing", async () => {
    await bot.api.sendMessage(CHAT, "x".repeat(4096))
    await bot.api.sendMessage(CHAT, `<b>${"&amp;".repeat(4096)}</b>`, { parse_mode: "HTML" })
    const error = await refusal(bot.api.sendMessage(CHAT, "x".repeat(4097)))
    expect(error.error_code).toBe(400)
    expect(error.description).toBe("Bad Request: message is too long")
    expect((await refusal(bot.api.sendMessage(CHAT, " \n "))).description).toBe("Bad Request: message text is empty")
    expect((await refusal(bot.api.sendMessage(CHAT, "<b></b>", { parse_mode: "HTML" }))).description).toBe("Bad Request: message text is empty")
    expect(api.sent).toHaveLength(2)
  })

  it("rejects malformed or unsupported HTML", async () => {
    const cases: [string, string][] = [
      ["<b>unclosed", `Can't find end tag corresponding to start tag "b"`],
      ["1 < 2", `Unsupported start tag "" at byte offset 2`],
      ["<script>alert(1)</script>", `Unsupported start tag "script" at byte offset 0`],
      ["é<b><i>x</b></i>", `Unmatched end tag at byte offset 9, expected "</i>", found "</b>"`],
      ["x</b>", "Unexpected end tag at byte offset 1"],
      ["<b", "Unclosed start tag at byte offset 0"],
      [`<span class="other">x</span>`, `Tag "span" must have class "tg-spoiler" at byte offset 0`],
    ]
    for (const [html, reason] of cases) {
      const error = await refusal(bot.api.sendMessage(CHAT, html, { parse_mode: "HTML" }))
      expect(error.error_code).toBe(400)
      expect(error.description).toBe(`Bad Request: can't parse entities: ${reason}`)
    }
    // Without parse_mode the same text is just text, and a lone & is a literal under HTML.
    expect((await bot.api.sendMessage(CHAT, "<b>unclosed")).text).toBe("<b>unclosed")
    expect((await bot.api.sendMessage(CHAT, "a & b &amp c", { parse_mode: "HTML" })).text).toBe("a & b &amp c")
  })

  it("accepts every chunk the renderer makes of a long reply", async () => {
    const reply = Array.from({ length: 60 }, (_, n) => `## Part ${n}\n**Bold** _it_ \`a<b>\` [link](https://example.com/?q=${n}&x="y") & more text ${"words ".repeat(20)}\n\n\`\`\`js\nif (a < b && c) {}\n\`\`\``).join("\n\n")
    const chunks = renderTelegram(reply)
    expect(chunks.length).toBeGreaterThan(1)
    for (const chunk of chunks) {
      const message = await bot.api.sendMessage(CHAT, chunk.html, { parse_mode: "HTML" })
      expect(message.text).toBe(chunk.plain)
    }
  })

  it("rejects callback data over 64 bytes", async () => {
    const button = (data: string) => ({ reply_markup: { inline_keyboard: [[{ text: "b", callback_data: data }]] } })
    await bot.api.sendMessage(CHAT, "fits", button("é".repeat(32)))
    const error = await refusal(bot.api.sendMessage(CHAT, "too long", button("é".repeat(32) + "x")))
    expect(error.description).toBe("Bad Request: BUTTON_DATA_INVALID")
  })

  it("edits and deletes messages with Telegram's errors", async () => {
    const message = await bot.api.sendMessage(CHAT, "draft")
    const error = await refusal(bot.api.editMessageText(CHAT, message.message_id, "draft"))
    expect(error.description).toMatch(/^Bad Request: message is not modified/)
    const edited = await bot.api.editMessageText(CHAT, message.message_id, "<i>final</i>", { parse_mode: "HTML" })
    expect(edited).toMatchObject({ message_id: message.message_id, text: "final", entities: [{ type: "italic", offset: 0, length: 5 }] })
    expect(api.sent).toEqual([edited])
    expect((await refusal(bot.api.editMessageText(CHAT, 999_999_999, "x"))).description).toBe("Bad Request: message to edit not found")
    expect(await bot.api.deleteMessage(CHAT, message.message_id)).toBe(true)
    expect(api.sent).toEqual([])
    expect((await refusal(bot.api.deleteMessage(CHAT, message.message_id))).description).toBe("Bad Request: message to delete not found")
  })

  it("takes chat actions and commands", async () => {
    expect(await bot.api.sendChatAction(CHAT, "typing")).toBe(true)
    expect(await bot.api.setMyCommands([{ command: "start", description: "Start" }])).toBe(true)
    expect(api.commands).toEqual([{ command: "start", description: "Start" }])
    expect((await refusal(bot.api.setMyCommands([{ command: "Bad Command", description: "x" }]))).description).toBe("Bad Request: BOT_COMMAND_INVALID")
  })

  it("delivers a pushed update to a running bot at once and confirms it on stop", async () => {
    bot.command("start", (ctx) => ctx.reply("started"))
    bot.on("message:text", (ctx) => ctx.reply(`echo: ${ctx.message.text}`))
    const { stopped } = await startPolling()
    const pushed = Date.now()
    const update = textUpdate(CHAT, CHAT, "hello")
    api.pushUpdate(update)
    await api.waitFor(() => api.sent.find((message) => message.text === "echo: hello"), 5000)
    // grammY polls with a 30 s timeout, so this only passes if the push ended the poll early.
    expect(Date.now() - pushed).toBeLessThan(3000)
    api.pushUpdate(textUpdate(CHAT, CHAT, "/start"))
    await api.waitFor(() => api.sent.find((message) => message.text === "started"), 5000)
    await bot.stop()
    await stopped
    const confirm = api.requests.filter((request) => request.method === "getUpdates").at(-1)
    expect(Number(confirm?.params.offset)).toBeGreaterThan(update.update_id + 1)
    expect(await bot.api.getUpdates({ timeout: 0 })).toEqual([])
  })

  it("bounds long polls, honours allowed_updates and ends a poll superseded by another", async () => {
    const started = Date.now()
    expect(await bot.api.getUpdates({ timeout: 1 })).toEqual([])
    expect(Date.now() - started).toBeGreaterThanOrEqual(900)
    api.pushUpdate(textUpdate(CHAT, CHAT, "not wanted"))
    const wanted = callbackUpdate(CHAT, CHAT, 1, "wanted")
    api.pushUpdate(wanted)
    expect(await bot.api.getUpdates({ timeout: 0, allowed_updates: ["callback_query"] })).toEqual([wanted])
    const first = bot.api.getUpdates({ offset: wanted.update_id + 1, timeout: 20 })
    await api.waitFor(() => api.requests.at(-1)?.params.timeout === 20, 5000)
    const second = bot.api.getUpdates({ timeout: 0 })
    expect((await refusal(first)).error_code).toBe(409)
    expect(await second).toEqual([])
  })

  it("answers a callback query once; the second answer fails", async () => {
    const message = await bot.api.sendMessage(CHAT, "Proceed?", { reply_markup: { inline_keyboard: [[{ text: "Yes", callback_data: "yes" }]] } })
    const pressed: string[] = []
    bot.on("callback_query:data", async (ctx) => {
      pressed.push(`${ctx.callbackQuery.data} on ${ctx.callbackQuery.message?.text}`)
      await ctx.answerCallbackQuery({ text: "Done" })
    })
    const { stopped } = await startPolling()
    const update = callbackUpdate(CHAT, CHAT, message.message_id, "yes")
    api.pushUpdate(update)
    await api.waitFor(() => api.callbackAnswers.length === 1, 5000)
    expect(pressed).toEqual(["yes on Proceed?"])
    expect(api.callbackAnswers[0]).toMatchObject({ callback_query_id: update.callback_query?.id, text: "Done" })
    await bot.stop()
    await stopped
    const error = await refusal(bot.api.answerCallbackQuery(update.callback_query?.id ?? ""))
    expect(error.error_code).toBe(400)
    expect(error.description).toBe("Bad Request: query is too old and response timeout expired or query ID is invalid")
    expect((await refusal(bot.api.answerCallbackQuery("never-sent"))).error_code).toBe(400)
  })

  it("fails the next call on demand, with 429's retry_after", async () => {
    api.failNext("sendMessage", { status: 429, retry_after: 7 })
    const error = await refusal(bot.api.sendMessage(CHAT, "hi"))
    expect(error.error_code).toBe(429)
    expect(error.description).toBe("Too Many Requests: retry after 7")
    expect(error.parameters.retry_after).toBe(7)
    expect((await bot.api.sendMessage(CHAT, "hi")).text).toBe("hi")
    api.failNext("sendMessage", { status: 403, description: "Forbidden: bot was blocked by the user" })
    expect((await refusal(bot.api.sendMessage(CHAT, "hi"))).description).toBe("Forbidden: bot was blocked by the user")
  })

  it("is retried correctly by @grammyjs/auto-retry", async () => {
    bot.api.config.use(autoRetry())
    api.failNext("sendMessage", { status: 429, retry_after: 1 })
    const started = Date.now()
    expect((await bot.api.sendMessage(CHAT, "eventually")).text).toBe("eventually")
    expect(Date.now() - started).toBeGreaterThanOrEqual(900)
    expect(api.requests.filter((request) => request.method === "sendMessage")).toHaveLength(2)
  })
})

describe("fake Telegram API over plain HTTP", () => {
  it("reads form-encoded bodies and refuses bad tokens and unknown methods", async () => {
    const body = new URLSearchParams({ chat_id: String(CHAT), text: "<b>form</b>", parse_mode: "HTML", reply_markup: JSON.stringify({ inline_keyboard: [[{ text: "a", callback_data: "a" }]] }) })
    const sent = await fetch(`${api.apiRoot}/bot${api.token}/sendMessage`, { method: "POST", body })
    expect(await sent.json()).toMatchObject({ ok: true, result: { text: "form", entities: [{ type: "bold" }], reply_markup: { inline_keyboard: [[{ callback_data: "a" }]] } } })
    const unauthorized = await fetch(`${api.apiRoot}/bot1:wrong/getMe`)
    expect([unauthorized.status, await unauthorized.json()]).toEqual([401, { ok: false, error_code: 401, description: "Unauthorized" }])
    const missing = await fetch(`${api.apiRoot}/bot${api.token}/sendSticker`, { method: "POST" })
    expect([missing.status, await missing.json()]).toEqual([404, { ok: false, error_code: 404, description: "Not Found" }])
  })

  it("bounds waitFor and ends a pending long poll on close", async () => {
    await expect(api.waitFor(() => api.sent.length > 0, 100)).rejects.toThrow("within 100 ms")
    const poll = fetch(`${api.apiRoot}/bot${api.token}/getUpdates?timeout=30`).then((response) => response.json())
    await api.waitFor(() => api.requests.length === 1, 5000)
    const closing = Date.now()
    await api.close()
    expect(await poll).toEqual({ ok: true, result: [] })
    expect(Date.now() - closing).toBeLessThan(2000)
  })
})
