import { existsSync, writeFileSync } from "node:fs"
import { resolve } from "node:path"
import { createInterface } from "node:readline/promises"
import type { Command } from "commander"
import { ConfigError, type Config } from "../config/config.ts"
import type { Check } from "../doctor/check.ts"
import { envFileText, SetupAnswers, setupVariables } from "../setup/env-file.ts"
import { CliError, print } from "./common.ts"

type SetupOptions = Partial<Record<"model" | "baseUrl" | "apiKey" | "telegramToken" | "slackBotToken" | "slackAppToken" | "slackSigningSecret", string>> & { force?: boolean; checks: boolean }

const QUESTIONS: Array<{ key: keyof SetupAnswers; ask: string }> = [
  { key: "model", ask: "Model, as <provider>:<model-id> (openai:gpt-4.1-mini, anthropic:claude-sonnet-4-5, openai-compatible:qwen2.5:7b)" },
  { key: "baseUrl", ask: "The provider's base URL (Enter for the provider's own; for Ollama http://127.0.0.1:11434/v1)" },
  { key: "apiKey", ask: "API key (Enter for none)" },
  { key: "telegramToken", ask: "Telegram bot token from @BotFather, <bot id>:<secret> (Enter to skip)" },
  { key: "slackBotToken", ask: "Slack Bot User OAuth Token, xoxb-… (Enter to skip)" },
  { key: "slackAppToken", ask: "Slack app-level token for Socket Mode, xapp-… (Enter to skip)" },
]

export function registerSetup(program: Command): void {
  program
    .command("setup")
    .description("write ./.env for a first start: the model and its key, the Telegram and Slack tokens; checks each before writing (prompts for what is not given, on a terminal)")
    .option("--model <provider:model>", "the model every role uses, e.g. openai:gpt-4.1-mini")
    .option("--base-url <url>", "the provider's base URL (OPENAI_BASE_URL, ANTHROPIC_BASE_URL or OPENAI_COMPATIBLE_BASE_URL)")
    .option("--api-key <key>", "the provider's API key")
    .option("--telegram-token <token>", "the bot token @BotFather gave")
    .option("--slack-bot-token <token>", "the Slack app's Bot User OAuth Token (xoxb-…)")
    .option("--slack-app-token <token>", "the Slack app-level token (xapp-…), for Socket Mode")
    .option("--slack-signing-secret <secret>", "the Slack app's signing secret, for Slack over HTTP")
    .option("--no-checks", "write without asking the model and the platforms (offline)")
    .option("--force", "overwrite an existing .env")
    .action(async (options: SetupOptions, command: Command) => {
      const file = resolve(".env")
      if (existsSync(file) && !options.force) throw new CliError(`${file} exists; give --force to overwrite it (or edit it)`)
      const answers = await gather(options)
      let setup: ReturnType<typeof setupVariables>
      try {
        setup = setupVariables(answers)
      } catch (error) {
        throw new CliError(error instanceof ConfigError ? error.message : String(error), 2)
      }
      const checks = options.checks ? await check(setup.config) : []
      const failed = checks.filter((c) => !c.ok)
      for (const c of checks) process.stderr.write(`${c.ok ? "ok  " : "FAIL"}  ${c.name}: ${c.detail}${c.fix ? `\n      fix: ${c.fix}` : ""}\n`)
      if (failed.length > 0) throw new CliError(`nothing written: ${failed.map((c) => c.name).join(", ")} failed (fix it, or give --no-checks to write anyway)`)
      // The file holds keys: readable by this user only.
      writeFileSync(file, envFileText(setup.variables), { mode: 0o600 })
      const telegramBot = /@(\S+)/.exec(checks.find((c) => c.name === "telegram")?.detail ?? "")?.[1]
      print(command, { file, variables: setup.variables.map(([name]) => name), checks }, () => `wrote ${file}\n\n${nextSteps(setup.config, telegramBot)}`)
    })
}

/** The flags given; on a terminal, a prompt for each one not given (the model at least). */
async function gather(options: SetupOptions): Promise<SetupAnswers> {
  const given: Partial<SetupAnswers> = { ...options, telegramApiRoot: process.env.TELEGRAM_API_ROOT, slackApiUrl: process.env.SLACK_API_URL }
  const terminal = Boolean(process.stdin.isTTY && process.stdout.isTTY)
  if (!given.model && !terminal) throw new CliError("give --model <provider:model> (and --api-key, --base-url, --telegram-token as needed), or run it in a terminal to be asked", 2)
  if (terminal && !options.model) {
    const prompt = createInterface({ input: process.stdin, output: process.stdout })
    // Lines are read from the iterator, which keeps those typed (or pasted) ahead of their question.
    const lines = prompt[Symbol.asyncIterator]()
    try {
      for (const question of QUESTIONS) {
        if (given[question.key]) continue
        process.stdout.write(`${question.ask}: `)
        const line = await lines.next()
        if (line.done) throw new CliError("setup cancelled: the input ended", 2)
        const answer = String(line.value).trim()
        if (answer) given[question.key] = answer
      }
    } finally {
      prompt.close()
    }
  }
  const parsed = SetupAnswers.safeParse(given)
  if (!parsed.success) throw new CliError("a model is needed: <provider>:<model-id>", 2)
  return parsed.data
}

/** One request to the model (its model list, or one token) and the platforms' who-am-I calls. */
async function check(config: Config): Promise<Check[]> {
  // The model and chat libraries are loaded for the checks only.
  const [{ checkModels }, { checkSlack, checkTelegram }] = await Promise.all([import("../model/model-check.ts"), import("../doctor/channels.ts")])
  const checks = await checkModels(config)
  if (config.telegram.botToken) checks.push(await checkTelegram(config.telegram))
  if (config.slack.botToken) checks.push(...(await checkSlack(config.slack)))
  return checks
}

function nextSteps(config: Config, telegramBot: string | undefined): string {
  const steps = ["Next:"]
  if (config.telegram.botToken) steps.push(`- Telegram: write to ${telegramBot ? `@${telegramBot}` : "your bot"}. You get a pairing code and your id; approve it with \`npx steward pairing approve <code>\`, or put the id in ALLOWED_USERS.`)
  else steps.push("- Telegram: in a chat with @BotFather send /newbot; give the token to `steward setup --telegram-token <token> --force …` (or TELEGRAM_BOT_TOKEN in .env).")
  if (config.slack.botToken) steps.push("- Slack: message the app in its Messages tab; approve the pairing code, or set ALLOWED_USERS=slack:U…")
  else steps.push("- Slack: create an app from deploy/slack-manifest.json at https://api.slack.com/apps (README: Setting up Slack), then set SLACK_BOT_TOKEN and SLACK_APP_TOKEN.")
  steps.push("- Start: `npm start` (with no chat token it is a chat in this terminal). `npx steward doctor` checks everything again.")
  return `${steps.join("\n")}\n`
}
