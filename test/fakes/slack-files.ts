import type { IncomingMessage, ServerResponse } from "node:http"
import { ApiError, type SlackFile } from "./slack-messages.ts"

type Params = Record<string, unknown>
/** A file the bot uploaded, once completed into a channel. */
export type SlackUpload = { id: string; filename: string; data: Buffer; channel?: string; thread_ts?: string; initial_comment?: string; title?: string }

/**
 * Files in the fake Slack API: those users shared, served at a private download URL that needs
 * the bot token, and those the bot uploads through files.uploadV2's three steps
 * (files.getUploadURLExternal, the upload to the URL it returned, files.completeUploadExternal).
 */
export class SlackFiles {
  /** Files the bot uploaded and completed into a conversation. */
  readonly uploads: SlackUpload[] = []
  /** Downloads of hosted files, with the token they came with. */
  readonly downloads: { id: string; token?: string }[] = []
  private readonly hosted = new Map<string, { name: string; mimetype: string; data: Buffer }>()
  private readonly pendingUploads = new Map<string, { filename: string; length: number; data?: Buffer }>()
  private lastFile = 0

  /** `origin`: the fake's `http://127.0.0.1:<port>`, known once it listens. */
  constructor(
    private readonly botToken: string,
    private readonly origin: () => string,
  ) {}

  /** Serves `data` as a file a user shared; `size` may claim another size (for limits). */
  host(name: string, mimetype: string, data: Buffer | string, size?: number): SlackFile {
    const id = `F0IN${++this.lastFile}`
    const bytes = Buffer.from(data)
    this.hosted.set(id, { name, mimetype, data: bytes })
    const url = `${this.origin()}/files-pri/${id}/${encodeURIComponent(name)}`
    return { id, name, mimetype, size: size ?? bytes.byteLength, url_private: url, url_private_download: url, mode: "hosted" }
  }

  getUploadURLExternal(params: Params) {
    const length = Number(params.length)
    if (!params.filename) throw new ApiError("invalid_arguments")
    if (!Number.isSafeInteger(length) || length < 1) throw new ApiError("invalid_arguments")
    const id = `F0UP${++this.lastFile}`
    this.pendingUploads.set(id, { filename: String(params.filename), length })
    return { upload_url: `${this.origin()}/upload/v1/${id}`, file_id: id }
  }

  completeUploadExternal(params: Params) {
    const files = (typeof params.files === "string" ? JSON.parse(params.files) : params.files) as { id: string; title?: string }[]
    const done = files.map((file) => {
      const pending = this.pendingUploads.get(file.id)
      if (!pending?.data) throw new ApiError("file_not_found")
      this.pendingUploads.delete(file.id)
      const channel = params.channel_id === undefined ? undefined : String(params.channel_id)
      const upload: SlackUpload = { id: file.id, filename: pending.filename, data: pending.data, channel, title: file.title, ...(params.thread_ts !== undefined && { thread_ts: String(params.thread_ts) }), ...(params.initial_comment !== undefined && { initial_comment: String(params.initial_comment) }) }
      this.uploads.push(upload)
      return { id: file.id, name: pending.filename, title: file.title ?? pending.filename }
    })
    return { files: done }
  }

  /** The file routes: private downloads need the bot token; an upload URL takes the bytes once. */
  async route(req: IncomingMessage, res: ServerResponse, pathname: string): Promise<boolean> {
    const download = /^\/files-pri\/([^/]+)\/[^/]+$/.exec(pathname)
    if (download) {
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1]
      this.downloads.push({ id: download[1], token })
      const file = this.hosted.get(download[1])
      if (!file) res.writeHead(404).end()
      else if (token !== this.botToken) res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end("<html><body>Sign in to Slack</body></html>")
      else res.writeHead(200, { "content-type": file.mimetype, "content-length": file.data.byteLength }).end(file.data)
      return true
    }
    const upload = /^\/upload\/v1\/([^/]+)$/.exec(pathname)
    if (upload && req.method === "POST") {
      const pending = this.pendingUploads.get(upload[1])
      const chunks: Buffer[] = []
      for await (const chunk of req) chunks.push(chunk as Buffer)
      // Slack takes the bytes raw or as a multipart form's file (the Web API client sends the latter).
      const type = req.headers["content-type"] ?? ""
      const form = type.startsWith("multipart/form-data") ? await new Request("http://127.0.0.1/", { method: "POST", headers: { "content-type": type }, body: new Uint8Array(Buffer.concat(chunks)) }).formData() : undefined
      const part = form && [...form.values()].find((value) => typeof value !== "string")
      const data = part ? Buffer.from(await part.arrayBuffer()) : Buffer.concat(chunks)
      if (!pending || data.byteLength !== pending.length) res.writeHead(400).end("bad upload")
      else {
        pending.data = data
        res.writeHead(200, { "content-type": "text/plain" }).end(`OK - ${data.byteLength}`)
      }
      return true
    }
    return false
  }
}
