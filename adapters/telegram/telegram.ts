import type { Logger } from "pino"
import type { Channel, ChannelHandlers, OutgoingMessage } from "../../src/channel/channel.ts"
import type { Config } from "../../src/config/config.ts"

/** Telegram private chats through grammY. (Being built: see issue 5.) */
export class TelegramChannel implements Channel {
  readonly name = "telegram"
  constructor(
    private readonly config: Config["telegram"] & { botToken: string },
    private readonly log: Logger,
  ) {}
  async start(_handlers: ChannelHandlers): Promise<void> {
    throw new Error("the Telegram channel is not built yet")
  }
  async send(_conversation: string, _message: OutgoingMessage): Promise<{ messageId: string }> {
    throw new Error("the Telegram channel is not built yet")
  }
  async edit(): Promise<void> {}
  async stop(): Promise<void> {}
}
