import { createInterface } from "node:readline"
import type { Readable, Writable } from "node:stream"
import type { Channel, ChannelHandlers } from "../../src/channel/channel.ts"
import type { OutgoingMessage, ProgressUpdate } from "../../src/core/types.ts"

export const CONSOLE_CONVERSATION = "console:local"

/**
 * A terminal chat as user `console:local`. Works on a TTY and on pipes alike: one message
 * per input line, replies printed as they arrive, nothing that waits for a terminal — so it
 * can be scripted. When input ends, `onEnd` lets the program finish its work and exit.
 */
export class ConsoleChannel implements Channel {
  readonly name = "console"
  private sent = 0
  private lines?: ReturnType<typeof createInterface>

  constructor(
    private readonly input: Readable & { isTTY?: boolean } = process.stdin,
    private readonly output: Writable = process.stdout,
    private readonly onEnd: () => void = () => {},
  ) {}

  async start({ onMessage }: ChannelHandlers): Promise<void> {
    const tty = Boolean(this.input.isTTY)
    this.lines = createInterface({ input: this.input, output: tty ? this.output : undefined, terminal: tty, prompt: "you> " })
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
    // The core takes a typed number or label as the answer to a question.
    const choices = message.buttons?.map((button, i) => `  ${i + 1}. ${button.label}`) ?? []
    this.print([`steward: ${message.text}`, ...choices].join("\n"))
    return { messageId: `console-${++this.sent}` }
  }

  /** A terminal has no message to edit: the new state is printed as a line of its own. */
  async edit(_conversation: string, _messageId: string, message: OutgoingMessage): Promise<void> {
    this.print(`steward: ${message.text}`)
  }

  /** Printing does not refuse a message: whatever went wrong may go right on a retry. */
  isPermanent(_error: unknown): boolean {
    return false
  }

  progress(_conversation: string, update: ProgressUpdate): void {
    const last = update.tools.at(-1)
    if (update.state === "running" && last) this.print(`  … ${update.agent}: ${last.title ?? last.tool} (${last.status})`)
  }

  async stop(): Promise<void> {
    this.lines?.close()
  }

  private print(text: string): void {
    this.output.write(`${text}\n`)
    if (this.input.isTTY) this.lines?.prompt(true)
  }
}
