import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { startAnthropicApi, type AnthropicApi, type AnthropicReply } from "../fakes/anthropic-api.ts"
import { startTelegramApi, textUpdate, type TelegramApi } from "../fakes/telegram-api.ts"
import { telegramEnv, untilWhileRunning } from "../support/e2e.ts"
import { StewardProcess } from "../support/process.ts"

const OWNER = 1001
const ANSWER = "Here is **the answer** you asked for. " + Array.from({ length: 12 }, (_, i) => `Sentence ${i + 1} of a long answer.`).join(" ")
/** The answer as Telegram shows it after the HTML rendering: the bold markers are gone. */
const SHOWN = ANSWER.replace(/\*\*/g, "")
const PACE = { chunks: 20, overMs: 2000 }

let telegram: TelegramApi
let anthropic: AnthropicApi | undefined
let steward: StewardProcess | undefined
let dataDir: string

beforeEach(async () => {
  telegram = await startTelegramApi()
  dataDir = mkdtempSync(join(tmpdir(), "steward-telegram-live-anthropic-"))
})

afterEach(async () => {
  await steward?.kill("SIGKILL")
  steward = undefined
  await anthropic?.close()
  anthropic = undefined
  await telegram.close()
  rmSync(dataDir, { recursive: true, force: true })
})

/** The built program with the Anthropic provider (its key and base URL) pointed at the fake API. */
async function start(first: AnthropicReply): Promise<StewardProcess> {
  // The Teller answers with `first`, and ends its turn once the reply's result is back.
  anthropic = await startAnthropicApi((req) => (req.role === "teller" && !req.afterTool ? first : {}))
  return (steward = StewardProcess.start({
    DATA_DIR: dataDir,
    MODEL: "anthropic:claude-scripted",
    ANTHROPIC_API_KEY: "sk-ant-fake",
    ANTHROPIC_BASE_URL: anthropic.url,
    MODEL_MAX_RETRIES: "1",
    ALLOWED_USERS: `telegram:${OWNER}`,
    ...telegramEnv(telegram),
  }))
}

const botMessages = () => telegram.sent.filter((message) => message.chat.id === OWNER)

/** One growing draft: each the start of the next, all of them the answer's start. */
function expectGrowingDrafts(): void {
  const drafts = telegram.drafts.filter((draft) => draft.chatId === OWNER)
  expect(drafts.length).toBeGreaterThanOrEqual(3)
  expect(new Set(drafts.map((draft) => draft.draftId)).size).toBe(1)
  for (const [i, draft] of drafts.entries()) {
    expect(ANSWER.startsWith(draft.text)).toBe(true)
    if (i > 0) expect(draft.text.length).toBeGreaterThan(drafts[i - 1]!.text.length)
  }
}

describe("Telegram live answers from Anthropic's streamed Messages API (built program, fake Anthropic and Bot APIs)", () => {
  it("shows a reply call's text argument as growing drafts while its input_json_delta events arrive, then one final message", async () => {
    const running = await start({ toolCalls: [{ name: "reply", input: { text: ANSWER } }], pace: PACE })
    telegram.pushUpdate(textUpdate(OWNER, OWNER, "tell me"))
    await untilWhileRunning(running, "the final message", () => botMessages().length === 1, 30_000)
    expectGrowingDrafts()
    // The first draft came while the call's input was still streaming, well before its end.
    const teller = anthropic!.requests.find((request) => request.role === "teller")!
    expect(telegram.drafts[0]!.at - teller.firstTokenAt!).toBeLessThan(PACE.overMs / 2)
    expect(botMessages().map((message) => message.text)).toEqual([SHOWN])
    expect(anthropic!.requests.every((request) => request.stream)).toBe(true)
  })

  it("shows an answer given as text_delta events the same way", async () => {
    const running = await start({ text: ANSWER, pace: PACE })
    telegram.pushUpdate(textUpdate(OWNER, OWNER, "tell me"))
    await untilWhileRunning(running, "the final message", () => botMessages().length === 1, 30_000)
    expectGrowingDrafts()
    expect(botMessages().map((message) => message.text)).toEqual([SHOWN])
    expect(anthropic!.requests.every((request) => request.stream)).toBe(true)
  })
})
