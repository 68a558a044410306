import type { IncomingMessage, ServerResponse } from "node:http"
import type { InlineKeyboardMarkup, MessageEntity } from "grammy/types"
import { parseHtml } from "./telegram-parse-mode.ts"

/**
 * How the fake Telegram API reads a Bot API call (its body: JSON, form-encoded or multipart;
 * its chat; its message content, checked against Telegram's limits) and answers it.
 */

export type Params = Record<string, unknown>

export const MESSAGE_LIMIT = 4096

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly description: string,
    readonly retryAfter?: number,
  ) {
    super(description)
  }
}
export const badRequest = (what: string) => new ApiError(400, `Bad Request: ${what}`)

export function reply(res: ServerResponse, status: number, body: unknown): void {
  if (res.writableEnded || res.destroyed) return
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body))
}

export async function bodyOf(req: IncomingMessage): Promise<Params> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  const type = req.headers["content-type"] ?? ""
  if (type.startsWith("multipart/form-data")) return multipartOf(Buffer.concat(chunks), type)
  const raw = Buffer.concat(chunks).toString("utf8")
  if (!raw) return {}
  if (type.startsWith("application/json")) {
    try {
      return JSON.parse(raw) as Params
    } catch {
      throw badRequest("invalid JSON in request body")
    }
  }
  if (type.startsWith("application/x-www-form-urlencoded")) {
    // Form fields are strings; Telegram reads the structured ones (reply_markup, allowed_updates) as JSON.
    const entries = [...new URLSearchParams(raw)].map(([key, value]) => {
      if (!/^[[{]/.test(value)) return [key, value]
      try {
        return [key, JSON.parse(value)]
      } catch {
        return [key, value]
      }
    })
    return Object.fromEntries(entries) as Params
  }
  throw badRequest(`the fake Telegram API cannot read ${type || "bodies without a content type"}`)
}

/** A multipart body's fields: strings, and files as File (with their bytes beside them as
 *  `<field>:bytes`). Parsed by hand: undici's FormData parser refuses grammY's bodies. */
function multipartOf(body: Buffer, type: string): Params {
  const boundary = /boundary="?([^";]+)"?/.exec(type)?.[1]
  if (!boundary) throw badRequest("multipart body without a boundary")
  const params: Params = {}
  const delimiter = Buffer.from(`--${boundary}`)
  let start = body.indexOf(delimiter)
  while (start >= 0) {
    const next = body.indexOf(delimiter, start + delimiter.length)
    if (next < 0) break
    const part = body.subarray(start + delimiter.length, next)
    start = next
    const headerEnd = part.indexOf("\r\n\r\n")
    if (headerEnd < 0) continue
    const headers = part.subarray(0, headerEnd).toString("utf8")
    // The part's content ends before the CRLF that precedes the next delimiter.
    const content = part.subarray(headerEnd + 4, part.length - 2)
    const name = /name="([^"]*)"/.exec(headers)?.[1]
    if (name === undefined) continue
    // grammY leaves the filename unquoted.
    const filename = /filename="?([^"\r\n;]*)"?/.exec(headers)?.[1]
    if (filename === undefined) params[name] = content.toString("utf8")
    else {
      params[name] = new File([new Uint8Array(content)], filename)
      params[`${name}:bytes`] = content
    }
  }
  // A file attached as `attach://<name>` is the part <name>; its bytes are filed under the field that names it.
  for (const [key, value] of Object.entries(params)) {
    if (typeof value === "string" && value.startsWith("attach://")) params[`${key}:bytes`] = params[`${value.slice("attach://".length)}:bytes`]
  }
  return params
}

export function chatOf(params: Params): number {
  if (params.chat_id === undefined || params.chat_id === "") throw badRequest("chat_id is empty")
  const id = Number(params.chat_id)
  if (!Number.isSafeInteger(id)) throw badRequest("chat not found")
  return id
}

export function contentOf(params: Params): { text: string; entities?: MessageEntity[] } {
  const raw = params.text === undefined ? "" : String(params.text)
  const parsed = String(params.parse_mode ?? "").toLowerCase() === "html" ? parseHtml(raw) : { text: raw, entities: Array.isArray(params.entities) ? (params.entities as MessageEntity[]) : [] }
  if ("error" in parsed) throw badRequest(`can't parse entities: ${parsed.error}`)
  if (!parsed.text.trim()) throw badRequest("message text is empty")
  if (parsed.text.length > MESSAGE_LIMIT) throw badRequest("message is too long")
  return parsed.entities.length > 0 ? parsed : { text: parsed.text }
}

export function markupOf(params: Params): { reply_markup?: InlineKeyboardMarkup } {
  const markup = params.reply_markup as InlineKeyboardMarkup | undefined
  if (!markup || !Array.isArray(markup.inline_keyboard)) return {}
  for (const button of markup.inline_keyboard.flat()) {
    if ("callback_data" in button) {
      const bytes = Buffer.byteLength(String(button.callback_data))
      if (bytes < 1 || bytes > 64) throw badRequest("BUTTON_DATA_INVALID")
    }
  }
  return { reply_markup: markup }
}
