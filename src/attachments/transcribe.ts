import { experimental_transcribe as transcribe } from "ai"
import type { Config } from "../config/config.ts"
import { resolveTranscriptionModel } from "../model/model.ts"

/** Speech to text with TRANSCRIBE_MODEL, or undefined when it is not set (voice is not set up). */
export function transcriber(config: Config): ((audio: Uint8Array) => Promise<string>) | undefined {
  const spec = config.attachments.transcribeModel
  if (!spec) return undefined
  const model = resolveTranscriptionModel(spec, config)
  return async (audio) => (await transcribe({ model, audio, maxRetries: config.maxRetries })).text
}
