import type { ChatRequest, Reply } from "../fakes/model-server.ts"
import { afterTool, say } from "../support/scripts.ts"

/** Scripted agents for the Supervisor's tests, and a promise to release them by hand. */

export const done: Reply = { text: "" }

/** A Teller that replies once to each user message and once to each batch of task results. */
export function echoTeller(req: ChatRequest): Reply {
  if (afterTool(req)) return done
  if (req.lastUserText.includes("<task-results>")) return say(`results: ${req.lastUserText.match(/status="\w+"/g)?.join(" ")}`)
  return say(`you said: ${req.lastUserText}`)
}

/** Like echoTeller, but every user message is also delegated to the Planner. */
export function delegatingTeller(req: ChatRequest): Reply {
  if (afterTool(req) || req.lastUserText.includes("<task-results>")) return echoTeller(req)
  return { toolCalls: [{ name: "reply", args: { text: `you said: ${req.lastUserText}` } }, { name: "delegate", args: { prompt: req.lastUserText } }] }
}

/** A Planner that dispatches one worker task per prompt, saying "ok" as it does: a step that
 *  only stages workers ends its run. */
export const dispatching =
  (...prompts: string[]) =>
  (req: ChatRequest): Reply =>
    afterTool(req) ? { text: "ok" } : { text: "ok", toolCalls: prompts.map((prompt) => ({ name: "delegate", args: { prompt } })) }

/** A worker whose first call hangs until aborted and whose later calls answer `then`. */
export function hangsFirst(then: Reply = { hang: true }) {
  const started = deferred()
  let calls = 0
  const script = (): Reply => {
    if (++calls > 1) return then
    started.resolve()
    return { hang: true }
  }
  return { started: started.promise, script }
}

export function deferred<T = void>() {
  let resolve!: (value: T) => void
  const promise = new Promise<T>((r) => (resolve = r))
  return { promise, resolve }
}
