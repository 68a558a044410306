/** Model scripts and waits shared by the end-to-end tests of every channel. */
import { byRole, contentText, type ChatRequest, type ModelServer, type Reply, type Script } from "../fakes/model-server.ts"
import type { SlackApi } from "../fakes/slack-api.ts"
import type { TelegramApi } from "../fakes/telegram-api.ts"
import type { StewardProcess } from "./process.ts"
import { afterTool, say } from "./scripts.ts"
import { waitFor } from "./wait-for.ts"
import { unwrapped } from "../../src/trust/envelope.ts"
import { Store } from "../../src/store/store.ts"

/** Steward on `dataDir` with the scripted model server at `modelUrl` (one retry). */
export const scriptedEnv = (dataDir: string, modelUrl: string) => ({ DATA_DIR: dataDir, MODEL: "openai-compatible:scripted", OPENAI_COMPATIBLE_BASE_URL: modelUrl, MODEL_MAX_RETRIES: "1" })

/** The Slack channel against the fake Web API (HTTP events, signed with its secret). */
export const slackEnv = (api: SlackApi) => ({ SLACK_BOT_TOKEN: api.botToken, SLACK_SIGNING_SECRET: api.signingSecret, SLACK_API_URL: api.apiUrl })

/** The Telegram channel against the fake Bot API. */
export const telegramEnv = (api: TelegramApi) => ({ TELEGRAM_BOT_TOKEN: api.token, TELEGRAM_API_ROOT: api.apiRoot })

const replyCall = (text: string) => ({ name: "reply", args: { text } })

/** A Teller that answers every message with `text`. */
export const replying = (text: string) => (req: ChatRequest) => (afterTool(req) ? { text: "" } : say(text))

/** Teller → Planner → Worker → Teller: the Teller delegates, the Planner dispatches one worker, the Teller reports. */
export const delegating = (worker: Script) =>
  byRole({
    teller: (req) => {
      if (afterTool(req)) return { text: "" }
      if (req.lastUserText.startsWith("<task-results>")) return say(`Done: ${req.lastUserText.match(/Saved \S+/)?.[0] ?? "nothing saved"}`)
      return { toolCalls: [replyCall("On it."), { name: "delegate", args: { prompt: `Write a note about: ${req.lastUserText}` } }] }
    },
    planner: (req) => (afterTool(req) ? { text: "One worker dispatched." } : { toolCalls: [{ name: "delegate", args: { prompt: req.lastUserText } }] }),
    worker,
  })

export const writingWorker: Script = (req) => (afterTool(req) ? { text: "Saved notes/cats.md" } : { toolCalls: [{ name: "write_file", args: { path: "notes/cats.md", content: "Cats sleep a lot." } }] })

/** A Worker whose first run hangs until the process dies; the run after a restart saves a note. */
export function hangingOnce(): { worker: Script; calls: () => number } {
  let calls = 0
  const worker: Script = (req) => {
    if (afterTool(req)) return { text: "Saved notes/after-crash.md" }
    if (++calls === 1) return { hang: true }
    return { toolCalls: [{ name: "write_file", args: { path: "notes/after-crash.md", content: "ok" } }] }
  }
  return { worker, calls: () => calls }
}

/** A Teller that asks which colour and reports the answer it is resumed with. */
export const asking = (timeout: number) =>
  byRole({
    teller: (req) => {
      const answer = req.lastToolResults.find((result) => result.toolName === "ask_user")
      if (answer) return say(`got ${answer.content}`)
      if (afterTool(req)) return { text: "" }
      return { toolCalls: [{ name: "ask_user", args: { question: "Which colour?", options: ["Red", "Blue"], default: "Red", timeout } }] }
    },
  })

/** Waits for `predicate`, but gives up at once with the program's stderr if it died. */
export function untilWhileRunning<T>(steward: StewardProcess, what: string, predicate: () => T, timeoutMs = 20_000): Promise<NonNullable<T>> {
  const died = steward.exited.then((code) => Promise.reject(new Error(`Steward exited (${code}) while waiting for ${what}: ${steward.stderr.join("").slice(-2000)}`)))
  return Promise.race([waitFor(predicate, timeoutMs), died])
}

/** A slow Teller: it answers every message with `text`, but only once `release()` is called;
 *  `answeredAt` is when it first answered (`performance.now()`). */
export function heldReplying(text: string): { script: Script; release: () => void; answeredAt: () => number | undefined } {
  let release!: () => void
  const released = new Promise<void>((resolve) => (release = resolve))
  let answeredAt: number | undefined
  const teller: Script = async (req) => {
    if (afterTool(req)) return { text: "" }
    await released
    answeredAt ??= performance.now()
    return say(text)
  }
  return { script: byRole({ teller }), release, answeredAt: () => answeredAt }
}

/** Teller delegates the message and relays the task results; the Planner hands it to one Worker. */
export function chain(worker: Script, planner?: Script): Script {
  return byRole({
    teller: (req) => {
      if (afterTool(req)) return { text: "" }
      if (req.lastUserText.startsWith("<task-results>")) return say(`Result: ${resultOf(req.lastUserText)}`)
      return { toolCalls: [{ name: "delegate", args: { prompt: req.lastUserText } }] }
    },
    planner: planner ?? ((req) => (afterTool(req) ? { text: "dispatched" } : { toolCalls: [{ name: "delegate", args: { prompt: req.lastUserText } }] })),
    worker,
  })
}

/** The first batch report a Teller was woken with (a chain's), as the model was given it. */
export const firstReport = (models: ModelServer): string | undefined =>
  models.requests.flatMap((request) => request.body.messages.map((message) => contentText(message.content))).find((text) => text.startsWith("<task-results>"))

/** The Worker's output in a batch report (the Planner's task is in it too). */
function resultOf(report: string): string {
  // A tainted run's task carries a note of it in its prompt (trust/taint.ts), defused in the report.
  const prompts = report.replace(/\n+‹untrusted-content source="the run that wrote this task"[\s\S]*?‹\/untrusted-content boundary="[0-9a-f]+">/g, "")
  return unwrapped(/<task [^>]*agent="default"[^>]*>\nPrompt: [^\n]*\n([\s\S]*?)\n<task_metadata>/.exec(prompts)?.[1] ?? report)
}

/** A Worker that calls `tool` with `args` once and answers with what it got back. */
export function calling(tool: string, args: object, seen: ChatRequest[] = []): Script {
  return (req) => {
    seen.push(req)
    const result = req.lastToolResults.find((r) => r.toolName === tool)
    if (result) return { text: `${tool} said ${unwrapped(result.content)}` }
    return { toolCalls: [{ name: tool, args }] } satisfies Reply
  }
}

/** Waits until `channel`'s state in `dataDir` has an answer shown live (or, with `prefix`
 *  "status/", a status message) on record: a Steward process killed after that must end it at
 *  its next start. */
export async function liveAnswerOnRecord(dataDir: string, channel: string, prefix: "live/" | "status/" = "live/"): Promise<void> {
  const store = await Store.open(dataDir)
  try {
    const recorded = async () => (await store.channelState(channel).list(prefix)).length === 1
    for (const deadline = Date.now() + 10_000; !(await recorded()); await new Promise((resolve) => setTimeout(resolve, 20))) {
      if (Date.now() > deadline) throw new Error(`what was shown was never put on record under ${prefix}`)
    }
  } finally {
    await store.close()
  }
}
