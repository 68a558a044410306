import { describe, expect, it } from "vitest"
import { ConfigError, loadConfig } from "../../src/config/config.ts"

const OPENAI = { MODEL: "openai:gpt-4.1-mini", OPENAI_API_KEY: "sk-test" }
const LOCAL = { MODEL: "openai-compatible:qwen2.5:7b", OPENAI_COMPATIBLE_BASE_URL: "http://127.0.0.1:11434/v1" }

function messageOf(env: NodeJS.ProcessEnv): string {
  try {
    loadConfig(env)
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError)
    return (error as ConfigError).message
  }
  throw new Error("loadConfig accepted a bad environment")
}

describe("MAX_ATTACHMENT_MB, VISION, TRANSCRIBE_MODEL", () => {
  it("defaults to 20 MB, vision on for openai and anthropic, off for openai-compatible, no transcription", () => {
    expect(loadConfig(OPENAI).attachments).toEqual({ maxBytes: 20 * 1024 * 1024, vision: true, transcribeModel: undefined })
    expect(loadConfig({ MODEL: "anthropic:claude-sonnet-4-5", ANTHROPIC_API_KEY: "k" }).attachments.vision).toBe(true)
    expect(loadConfig(LOCAL).attachments.vision).toBe(false)
    // The Teller is the one that sees what users send.
    expect(loadConfig({ ...LOCAL, ...{ TELLER_MODEL: "openai:gpt-4.1", OPENAI_API_KEY: "k" } }).attachments.vision).toBe(true)
  })

  it("takes explicit values", () => {
    const config = loadConfig({ ...LOCAL, MAX_ATTACHMENT_MB: "5", VISION: "on", TRANSCRIBE_MODEL: "openai-compatible:whisper-large-v3" })
    expect(config.attachments).toEqual({ maxBytes: 5 * 1024 * 1024, vision: true, transcribeModel: { provider: "openai-compatible", id: "whisper-large-v3", variable: "TRANSCRIBE_MODEL" } })
    expect(loadConfig({ ...OPENAI, VISION: "off" }).attachments.vision).toBe(false)
  })

  it("refuses bad values with one line naming the variable", () => {
    expect(messageOf({ ...OPENAI, MAX_ATTACHMENT_MB: "0" })).toBe('MAX_ATTACHMENT_MB: expected a whole number from 1 to 2000, got "0"')
    expect(messageOf({ ...OPENAI, VISION: "yes" })).toBe('VISION: expected on or off, got "yes"')
    expect(messageOf({ ...OPENAI, TRANSCRIBE_MODEL: "whisper-1" })).toMatch(/^TRANSCRIBE_MODEL: expected <provider>:<model-id>/)
    expect(messageOf({ ...OPENAI, TRANSCRIBE_MODEL: "anthropic:x" })).toBe('TRANSCRIBE_MODEL: expected openai:<model> or openai-compatible:<model> (anthropic has no transcription), got "anthropic:x"')
    // Its provider needs its key like any model's.
    expect(messageOf({ ...LOCAL, TRANSCRIBE_MODEL: "openai:whisper-1" })).toBe("OPENAI_API_KEY is not set: expected an OpenAI API key, because TRANSCRIBE_MODEL uses openai")
  })
})
