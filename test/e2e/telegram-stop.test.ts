import type { InlineKeyboardButton, Message } from "grammy/types"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { startModelServer, type ModelServer, type Script } from "../fakes/model-server.ts"
import { callbackUpdate, startTelegramApi, textUpdate, type TelegramApi } from "../fakes/telegram-api.ts"
import { chain, firstReport, liveAnswerOnRecord, scriptedEnv, telegramEnv, untilWhileRunning } from "../support/e2e.ts"
import { StewardProcess } from "../support/process.ts"
import { endPlatformTest, platformTest } from "../support/platform-test.ts"

/**
 * Work you can watch, on Telegram, with the built program against the fake Bot API: delegated
 * work shows one status message with its title, elapsed time and a Stop button, edited in place;
 * the button stops it, and only for the people it belongs to.
 */

const OWNER = 1001
/** Allowed (ALLOWED_USERS has *), no owner: another person, who may not stop the owner's work. */
const OTHER = 1002
const PROMPT = "count every grain of sand on the beach"

let api: TelegramApi
let models: ModelServer | undefined
let dataDir: string
let steward: StewardProcess | undefined

beforeEach(async () => ({ api, dataDir } = await platformTest(startTelegramApi, "telegram-stop")))
afterEach(async () => {
  await endPlatformTest({ api, dataDir }, { steward, models })
  steward = models = undefined
})

const env = () => ({ ...scriptedEnv(dataDir, models!.url), ...telegramEnv(api), ALLOWED_USERS: `*,telegram:${OWNER}` })

async function start(worker: Script): Promise<StewardProcess> {
  models = await startModelServer(chain(worker))
  steward = StewardProcess.start(env())
  api.pushUpdate(textUpdate(OWNER, OWNER, PROMPT))
  return steward
}

const stopButtonOf = (message: Message) => message.reply_markup?.inline_keyboard.flat().find((button): button is InlineKeyboardButton.CallbackButton => "callback_data" in button && button.text === "Stop")
/** The status message of the work, as the chat shows it now. */
const status = () => api.sent.find((message) => message.chat.id === OWNER && message.text?.startsWith(`⚙️ ${PROMPT}`))
const replies = () => api.sent.filter((message) => message.chat.id === OWNER && !message.text?.startsWith("⚙️")).map((message) => message.text)
const answerTo = (press: ReturnType<typeof callbackUpdate>) => api.callbackAnswers.find((answer) => answer.callback_query_id === press.callback_query!.id)
/** The report of ended work the Teller was woken with. */
const report = () => firstReport(models!)

describe("Telegram: a status message with a Stop button (the built program)", () => {
  it("shows the title and elapsed time with a Stop button, edited in place; refuses another user's press; the owner's press stops the work, the Teller hears of it and the button goes", async () => {
    let workerRuns = 0
    const running = await start(() => (workerRuns++, { hang: true }))
    const shown = await untilWhileRunning(running, "the status message", () => status(), 30_000)
    expect(shown.text).toMatch(new RegExp(`^⚙️ ${PROMPT}\\nWorking for \\d+ s`))
    const stop = stopButtonOf(shown)!
    expect(stop).toBeDefined()
    // Edited in place as time passes, the button kept: the same message, no second one.
    const edited = await untilWhileRunning(running, "an edit of the status", () => (status()?.edit_date !== undefined ? status() : undefined), 15_000)
    expect(edited.message_id).toBe(shown.message_id)
    expect(edited.text).not.toBe(shown.text)
    expect(stopButtonOf(edited)?.callback_data).toBe(stop.callback_data)
    expect(api.sent.filter((message) => message.text?.startsWith("⚙️"))).toHaveLength(1)

    // Forged into the owner's chat by someone else: a clear answer, and the work goes on.
    const forged = callbackUpdate(OWNER, OTHER, shown.message_id, stop.callback_data)
    api.pushUpdate(forged)
    const refused = await untilWhileRunning(running, "the answer to the forged press", () => answerTo(forged))
    expect(refused.text).toBe("Someone else asked for this task; only they can stop it.")
    expect(stopButtonOf(status()!)).toBeDefined()
    expect(report()).toBeUndefined()

    const press = callbackUpdate(OWNER, OWNER, shown.message_id, stop.callback_data)
    api.pushUpdate(press)
    await untilWhileRunning(running, "the Teller's report of the stopped work", () => replies().some((text) => text?.startsWith("Result:")))
    expect(report()).toContain("stopped by the user (Stop button)")
    const ended = await untilWhileRunning(running, "the status saying it stopped", () => (status()?.text?.includes("Stopped after") ? status() : undefined))
    expect(ended.message_id).toBe(shown.message_id)
    expect(ended.reply_markup).toBeUndefined()
    expect(workerRuns).toBe(1)

    // A press that comes after the end (a second tap, a slow client) is told so.
    const late = callbackUpdate(OWNER, OWNER, shown.message_id, stop.callback_data)
    api.pushUpdate(late)
    expect((await untilWhileRunning(running, "the answer to the late press", () => answerTo(late))).text).toBe("This task has already ended; there is nothing to stop.")
  }, 90_000)

  it("says the work is done and removes the button when the result arrives", async () => {
    let finish!: () => void
    const finished = new Promise<void>((resolve) => (finish = resolve))
    const running = await start(async () => {
      await finished
      return { text: "Counted them all." }
    })
    const shown = await untilWhileRunning(running, "the status message", () => status(), 30_000)
    expect(stopButtonOf(shown)).toBeDefined()
    finish()
    await untilWhileRunning(running, "the reply with the result", () => replies().includes("Result: Counted them all."))
    const ended = await untilWhileRunning(running, "the status saying it is done", () => (status()?.text?.includes("Done after") ? status() : undefined))
    expect(ended.message_id).toBe(shown.message_id)
    expect(ended.reply_markup).toBeUndefined()
  }, 60_000)

  it("after a SIGKILL, the old button still stops the work while it runs again, and then says it has ended", async () => {
    let workerRuns = 0
    await start(() => (workerRuns++, { hang: true }))
    const shown = await untilWhileRunning(steward!, "the status message", () => status(), 30_000)
    const stop = stopButtonOf(shown)!
    await liveAnswerOnRecord(dataDir, "telegram", "status/")
    expect(await steward!.kill("SIGKILL")).toBe(null)

    steward = StewardProcess.start(env())
    // The task runs again after the restart; the message the crash left is cleared.
    await untilWhileRunning(steward, "the second run", () => workerRuns === 2, 30_000)
    await untilWhileRunning(steward, "the old status cleared", () => !api.sent.some((message) => message.message_id === shown.message_id))
    const press = callbackUpdate(OWNER, OWNER, shown.message_id, stop.callback_data)
    api.pushUpdate(press)
    await untilWhileRunning(steward, "the Teller's report of the stopped work", () => replies().some((text) => text?.startsWith("Result:")))
    expect(answerTo(press)?.text).toBeUndefined()
    expect(report()).toContain("stopped by the user (Stop button)")

    const late = callbackUpdate(OWNER, OWNER, shown.message_id, stop.callback_data)
    api.pushUpdate(late)
    expect((await untilWhileRunning(steward, "the answer to the late press", () => answerTo(late))).text).toBe("This task has already ended; there is nothing to stop.")
    expect(workerRuns).toBe(2)
  }, 90_000)
})
