import { createInterface } from "node:readline"
import type { Readable, Writable } from "node:stream"
import type { Channel, ChannelHandlers, ChannelHealth } from "../../src/channel/channel.ts"
import type { OutgoingMessage, ProgressUpdate } from "../../src/core/types.ts"
import { terminalMarkdown } from "./terminal.ts"

export const CONSOLE_CONVERSATION = "console:local"

const PROMPT = "you> "
const WORKING = "working… "

/**
 * A terminal chat as user `console:local`. Works on a TTY and on pipes alike: one message
 * per input line, replies printed as they arrive, nothing that waits for a terminal — so it
 * can be scripted. In a terminal, replies are rendered from Markdown and the prompt says
 * "working…" while a turn or task runs; on pipes the output is the plain text. When input
 * ends, `onEnd` lets the program finish its work and exit.
 */
export class ConsoleChannel implements Channel {
  readonly name = "console"
  readonly exclusive = true
  private sent = 0
  private lines?: ReturnType<typeof createInterface>
  private render: (markdown: string) => string = (markdown) => markdown

  constructor(
    private readonly input: Readable & { isTTY?: boolean } = process.stdin,
    private readonly output: Writable & { isTTY?: boolean } = process.stdout,
    private readonly onEnd: () => void = () => {},
  ) {}

  private get tty(): boolean {
    return Boolean(this.input.isTTY && this.output.isTTY)
  }

  async start({ onMessage }: ChannelHandlers): Promise<void> {
    const tty = this.tty
    if (tty) this.render = await terminalMarkdown()
    this.lines = createInterface({ input: this.input, output: tty ? this.output : undefined, terminal: tty, prompt: PROMPT })
    // Messages are handed over one after another so their order is the order typed.
    let previous = Promise.resolve()
    this.lines.on("line", (line) => {
      const text = line.trim()
      if (!text) return
      previous = previous.then(async () => void (await onMessage({ conversation: CONSOLE_CONVERSATION, user: CONSOLE_CONVERSATION, text }))).catch((error) => this.print(`(could not take that message: ${error instanceof Error ? error.message : error})`))
    })
    this.lines.on("close", () => void previous.then(this.onEnd))
    if (tty) this.lines.prompt()
  }

  async send(_conversation: string, message: OutgoingMessage): Promise<{ messageId: string }> {
    // The core takes a typed number or label as the answer to a question (or, once it has
    // hinted at the options, any text), and /skip for its default.
    const choices = message.buttons?.map((button, i) => `  ${i + 1}. ${button.label}`) ?? []
    const help = choices.length > 0 ? ["  (type a number or an option, or /skip)"] : []
    this.print([`steward: ${this.render(message.text)}`, ...choices, ...help].join("\n"))
    return { messageId: `console-${++this.sent}` }
  }

  /** A terminal has no message to edit: the new state is printed as a line of its own. */
  async edit(_conversation: string, _messageId: string, message: OutgoingMessage): Promise<void> {
    this.print(`steward: ${this.render(message.text)}`)
  }

  /** Printing does not refuse a message: whatever went wrong may go right on a retry. */
  isPermanent(_error: unknown): boolean {
    return false
  }

  progress(_conversation: string, update: ProgressUpdate): void {
    const last = update.tools.at(-1)
    if (update.state === "running" && last) this.print(`  … ${update.agent}: ${last.title ?? last.tool} (${last.status})`)
  }

  /** In a terminal the prompt shows that Steward is working; a pipe gets nothing extra. */
  activity(_conversation: string, busy: boolean): void {
    if (!this.tty || !this.lines) return
    this.lines.setPrompt(busy ? `${WORKING}${PROMPT}` : PROMPT)
    this.lines.prompt(true)
  }

  /** A terminal is always there. */
  health(): ChannelHealth {
    return { ok: true, reconnects: 0 }
  }

  async stop(): Promise<void> {
    this.lines?.close()
  }

  private print(text: string): void {
    if (this.tty) {
      // The reply goes above the prompt line, which is drawn again below it.
      this.output.write("\r\x1b[K")
    }
    this.output.write(`${text}\n`)
    if (this.tty) this.lines?.prompt(true)
  }
}
