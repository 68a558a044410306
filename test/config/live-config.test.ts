import { describe, expect, it } from "vitest"
import { ConfigError, loadConfig } from "../../src/config/config.ts"

const BASE = { MODEL: "openai:gpt-4.1-mini", OPENAI_API_KEY: "sk-test" }

function errorOf(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env)
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError)
    return error as ConfigError
  }
  throw new Error("loadConfig accepted a bad environment")
}

describe("STREAM_REPLIES and SLACK_SUGGESTED_PROMPTS", () => {
  it("streams replies by default; off turns it off; anything else is refused by name", () => {
    expect(loadConfig(BASE).streamReplies).toBe(true)
    expect(loadConfig({ ...BASE, STREAM_REPLIES: "off" }).streamReplies).toBe(false)
    expect(errorOf({ ...BASE, STREAM_REPLIES: "yes" }).message).toMatch(/^STREAM_REPLIES: expected on or off/)
  })

  it("takes 1 to 4 suggested prompts separated by ;", () => {
    expect(loadConfig(BASE).slack.suggestedPrompts).toBeUndefined()
    expect(loadConfig({ ...BASE, SLACK_SUGGESTED_PROMPTS: " What runs? ; Plan my week;" }).slack.suggestedPrompts).toEqual(["What runs?", "Plan my week"])
    expect(errorOf({ ...BASE, SLACK_SUGGESTED_PROMPTS: "a;b;c;d;e" }).message).toMatch(/^SLACK_SUGGESTED_PROMPTS: expected 1 to 4 prompts/)
    expect(errorOf({ ...BASE, SLACK_SUGGESTED_PROMPTS: " ; " }).message).toMatch(/^SLACK_SUGGESTED_PROMPTS: expected 1 to 4 prompts/)
  })
})
