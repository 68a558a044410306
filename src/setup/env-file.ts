import { z } from "zod"
import { ConfigError, loadConfig, type Config } from "../config/config.ts"
import { modelSpec } from "../config/fields.ts"

/** What `steward setup` asks for: flags, or answers typed at its prompts. */
export const SetupAnswers = z.object({
  model: z.string().min(1),
  baseUrl: z.string().optional(),
  apiKey: z.string().optional(),
  telegramToken: z.string().optional(),
  slackBotToken: z.string().optional(),
  slackAppToken: z.string().optional(),
  slackSigningSecret: z.string().optional(),
  /** Not asked: taken from the environment (a self-hosted Bot API server, a proxy). */
  telegramApiRoot: z.string().optional(),
  slackApiUrl: z.string().optional(),
})
export type SetupAnswers = z.output<typeof SetupAnswers>

/** Each provider's variables for its key and its endpoint. */
const PROVIDER_VARIABLES = {
  openai: { key: "OPENAI_API_KEY", url: "OPENAI_BASE_URL" },
  anthropic: { key: "ANTHROPIC_API_KEY", url: "ANTHROPIC_BASE_URL" },
  "openai-compatible": { key: "OPENAI_COMPATIBLE_API_KEY", url: "OPENAI_COMPATIBLE_BASE_URL" },
} as const

/**
 * The variables the answers set, in `.env` order, read back through loadConfig as start-up reads
 * them: a wrong form (a model without its provider, a malformed token, a half-set Slack) is the
 * same one line start-up would print (ConfigError), before anything is checked or written.
 */
export function setupVariables(answers: SetupAnswers): { variables: Array<[string, string]>; config: Config } {
  const spec = modelSpec.safeParse(answers.model)
  if (!spec.success) throw new ConfigError("MODEL", `--model: ${spec.error.issues[0]!.message}, got ${JSON.stringify(answers.model)}`)
  const provider = PROVIDER_VARIABLES[spec.data.provider]
  const variables: Array<[string, string | undefined]> = [
    ["MODEL", answers.model],
    [provider.key, answers.apiKey],
    [provider.url, answers.baseUrl],
    ["TELEGRAM_BOT_TOKEN", answers.telegramToken],
    ["TELEGRAM_API_ROOT", answers.telegramToken ? answers.telegramApiRoot : undefined],
    ["SLACK_BOT_TOKEN", answers.slackBotToken],
    ["SLACK_APP_TOKEN", answers.slackAppToken],
    ["SLACK_SIGNING_SECRET", answers.slackSigningSecret],
    ["SLACK_API_URL", answers.slackBotToken ? answers.slackApiUrl : undefined],
  ]
  const set = variables.filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== "")
  return { variables: set, config: loadConfig(Object.fromEntries(set)) }
}

/** `.env` text: a header, then one `NAME=value` line each (quoted when the value needs it). */
export function envFileText(variables: Array<[string, string]>, now = new Date()): string {
  const line = ([name, value]: [string, string]) => `${name}=${/^[\w@%+=:,./-]*$/.test(value) ? value : JSON.stringify(value)}`
  return `# Written by \`steward setup\` on ${now.toISOString().slice(0, 10)}. Every variable: .env.example.\n${variables.map(line).join("\n")}\n`
}
