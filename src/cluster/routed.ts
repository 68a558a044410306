import { mkdir, readFile, rm, stat, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { randomBytes } from "node:crypto"
import { FileTooLarge } from "../channel/channel.ts"
import { errorText } from "../core/errors.ts"
import type { InboundAttachment, InboundMessage, InboundOutcome } from "../core/types.ts"
import type { Answer } from "../question/questions.ts"
import { AWAIT_ANSWER, type Caller, type Capabilities } from "../tool/capabilities.ts"
import type { CallHandlers, LeaderCalls } from "./leader-calls.ts"

/** Long enough for a permission question's 600 s and the user's click. */
const APPROVAL_EXPIRE_SECONDS = 700

/** A Caller as it travels: only its own fields (a tool passes its whole context as the caller);
 *  the abort signal stays with the run that made the call. */
type PlainCaller = Omit<Caller, "abort">
const plain = ({ role, agent, conversation, user, sessionId, callId, fresh, taskId, askedAt }: Caller): PlainCaller => ({ role, agent, conversation, user, sessionId, callId, fresh, taskId, askedAt })
/** ask_user's "no answer yet" cannot travel as a symbol. */
const AWAITING = { awaiting: true } as const

/**
 * The capabilities of a run in a cluster: what only the leader runs (task board, scheduler,
 * questions, outbox) is used here when this process leads and through a leader call otherwise;
 * memory, history, notes and files are the same from every process.
 */
export function routedCapabilities(local: Capabilities, calls: LeaderCalls, leads: () => boolean): Capabilities {
  const via = async <T>(here: () => Promise<T>, method: string, args: unknown[], signal: AbortSignal, waiting?: { expireSeconds: number; waitsForUser: true }): Promise<T> =>
    leads() ? here() : ((await calls.call<T>(method, args, { ...waiting, signal })) as T)
  return {
    ...local,
    tasks: {
      delegate: (caller, request) => via(() => local.tasks.delegate(caller, request), "delegate", [plain(caller), request], caller.abort),
      listTasks: (caller, filter) => via(() => local.tasks.listTasks(caller, filter), "listTasks", [plain(caller), filter], caller.abort),
      cancelTask: (caller, taskId) => via(() => local.tasks.cancelTask(caller, taskId), "cancelTask", [plain(caller), taskId], caller.abort),
    },
    schedules: { schedule: (caller, request) => via(() => local.schedules.schedule(caller, request), "schedule", [plain(caller), request], caller.abort) },
    questions: {
      ask: async (caller, question) => {
        if (leads()) return local.questions.ask(caller, question)
        const answer = await calls.call<Answer | typeof AWAITING>("ask", [plain(caller), question], { signal: caller.abort, waitsForUser: true })
        return !answer || "awaiting" in answer ? AWAIT_ANSWER : answer
      },
      approve: (caller, tool, pattern) => via(() => local.questions.approve(caller, tool, pattern), "approve", [plain(caller), tool, pattern], caller.abort, { expireSeconds: APPROVAL_EXPIRE_SECONDS, waitsForUser: true }),
      inquire: (caller, key, question) =>
        via(() => local.questions.inquire(caller, key, question), "inquire", [plain(caller), key, question], caller.abort, { expireSeconds: question.timeout + APPROVAL_EXPIRE_SECONDS, waitsForUser: true }),
    },
    replies: {
      reply: (caller, text) => via(() => local.replies.reply(caller, text), "reply", [plain(caller), text], caller.abort),
      sendFile: (caller, file, caption) => via(() => local.replies.sendFile(caller, file, caption), "sendFile", [plain(caller), file, caption], caller.abort),
    },
  }
}

/** The leader's side of the calls above, and of the inbound messages and hook events other
 *  processes take in. */
export function leaderHandlers(local: Capabilities, take: (message: InboundMessage) => Promise<InboundOutcome | void>, raise: (name: string) => Promise<void>, stop: AbortSignal): CallHandlers {
  // A call from elsewhere ends with the leader's serving (`stop`), not with its caller's run.
  const revive = (caller: PlainCaller): Caller => ({ ...caller, abort: stop })
  return {
    delegate: (caller: PlainCaller, request: Parameters<Capabilities["tasks"]["delegate"]>[1]) => local.tasks.delegate(revive(caller), request),
    listTasks: (caller: PlainCaller, filter: Parameters<Capabilities["tasks"]["listTasks"]>[1]) => local.tasks.listTasks(revive(caller), filter),
    cancelTask: (caller: PlainCaller, taskId: string) => local.tasks.cancelTask(revive(caller), taskId),
    schedule: (caller: PlainCaller, request: Parameters<Capabilities["schedules"]["schedule"]>[1]) => local.schedules.schedule(revive(caller), request),
    ask: async (caller: PlainCaller, question: Parameters<Capabilities["questions"]["ask"]>[1]) => {
      const answer = await local.questions.ask(revive(caller), question)
      return answer === AWAIT_ANSWER ? AWAITING : answer
    },
    approve: (caller: PlainCaller, tool: string, pattern: string) => local.questions.approve(revive(caller), tool, pattern),
    inquire: (caller: PlainCaller, key: string, question: Parameters<Capabilities["questions"]["inquire"]>[2]) => local.questions.inquire(revive(caller), key, question),
    reply: (caller: PlainCaller, text: string) => local.replies.reply(revive(caller), text),
    sendFile: (caller: PlainCaller, file: Parameters<Capabilities["replies"]["sendFile"]>[1], caption: string) => local.replies.sendFile(revive(caller), file, caption),
    inbound: async (packed: PackedInbound) => {
      try {
        return (await take(unpackInbound(packed))) ?? {}
      } finally {
        await Promise.all((packed.attachments ?? []).map((attachment) => attachment.file && rm(attachment.file, { force: true })))
      }
    },
    raise: (name: string) => raise(name),
  }
}

/** An attachment as it travels: the file already downloaded into the shared data folder (or
 *  why it could not be). */
type PackedAttachment = Omit<InboundAttachment, "download"> & { file?: string; tooLarge?: number; error?: string }
export type PackedInbound = Omit<InboundMessage, "attachments"> & { attachments?: PackedAttachment[] }

/** Downloads a message's files into `dir` (DATA_DIR, shared by every process), so the leader can
 *  take the message as if it had come in there. */
export async function packInbound(message: InboundMessage, dir: string, maxBytes: number): Promise<PackedInbound> {
  if (!message.attachments?.length) return { ...message, attachments: undefined }
  await mkdir(dir, { recursive: true })
  const attachments = await Promise.all(
    message.attachments.map(async ({ download, ...attachment }): Promise<PackedAttachment> => {
      try {
        const file = join(dir, randomBytes(8).toString("hex"))
        await writeFile(file, await download(maxBytes))
        return { ...attachment, file }
      } catch (error) {
        return error instanceof FileTooLarge ? { ...attachment, tooLarge: error.maxBytes } : { ...attachment, error: errorText(error) }
      }
    }),
  )
  return { ...message, attachments }
}

function unpackInbound(packed: PackedInbound): InboundMessage {
  return {
    ...packed,
    attachments: packed.attachments?.map(({ file, tooLarge, error, ...attachment }) => ({
      ...attachment,
      download: async (maxBytes: number) => {
        if (tooLarge !== undefined) throw new FileTooLarge(Math.min(tooLarge, maxBytes))
        if (!file) throw new Error(error ?? "the file could not be downloaded")
        if ((await stat(file)).size > maxBytes) throw new FileTooLarge(maxBytes)
        return readFile(file)
      },
    })),
  }
}
