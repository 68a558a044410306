import type { ElicitRequestFormParams, ElicitResult, PrimitiveSchemaDefinition } from "@modelcontextprotocol/sdk/types.js"
import { z } from "zod"
import type { Question } from "../question/questions.ts"
import type { ToolContext } from "../tool/tool.ts"

/** The permission a rule names to keep a server from asking the user (its pattern: the server's name). */
export const ELICITATION_PERMISSION = "mcp_elicitation"
/** The option that declines a server's question; typing it (or its number) does too. */
export const DECLINE = "Decline"
/** A text answer is asked again this often when it does not fit the field, then the request is cancelled. */
const TRIES = 3
/** Typed for an optional field: leave it out. */
const EMPTY = "-"
/** The option that leaves an optional choice out. */
const LEAVE_OUT = "Leave out"

type Field = { key: string; schema: PrimitiveSchemaDefinition; required: boolean }
type Reply = { value: unknown } | { action: "decline" | "cancel" }

/**
 * A server's `elicitation/create` as questions to the user whose call it serves, one field at a
 * time through `ask_user`'s machinery: buttons for a choice or a yes/no (answered by the
 * option's text or number), a typed reply for text and numbers, checked against the field's
 * schema. "Decline" declines; no answer within the timeout (or /skip) cancels.
 */
export async function elicit(ctx: ToolContext, server: string, params: ElicitRequestFormParams, timeoutMs: number, seq: number): Promise<ElicitResult> {
  if (ctx.permit && !(await ctx.permit(ELICITATION_PERMISSION, server))) return { action: "decline" }
  const required = new Set(params.requestedSchema.required ?? [])
  const fields: Field[] = Object.entries(params.requestedSchema.properties).map(([key, schema]) => ({ key, schema, required: required.has(key) }))
  const content: Record<string, unknown> = {}
  for (const [index, field] of fields.entries()) {
    const intro = index === 0 ? `The MCP server “${server}” asks: ${params.message}\n\n` : ""
    const reply = await askField(ctx, `${intro}${fieldText(field)}`, field, timeoutMs, `elicit:${seq}:${field.key}`)
    if ("action" in reply) return { action: reply.action }
    if (reply.value !== undefined) content[field.key] = reply.value
  }
  return { action: "accept", content: content as ElicitResult["content"] }
}

async function askField(ctx: ToolContext, text: string, field: Field, timeoutMs: number, key: string): Promise<Reply> {
  const choices = choicesOf(field)
  const timeout = Math.round(timeoutMs / 1000)
  let problem = ""
  if (choices) {
    const options = [...choices.map((c) => c.label), DECLINE]
    // A typed answer that is none of the options (the question's hint did not help) is asked
    // again: the server takes only one of its values.
    for (let attempt = 0; attempt < TRIES; attempt++) {
      const { answer, source } = await ctx.questions.inquire(ctx, attempt === 0 ? key : `${key}:${attempt}`, { question: `${problem}${text}`, options, timeout })
      if (source !== "user") return { action: "cancel" }
      if (answer === DECLINE) return { action: "decline" }
      const choice = choices.find((c) => c.label === answer)
      if (choice) return { value: choice.value }
      problem = `That is not one of the options: pick one of ${choices.map((c) => c.label).join(", ")}.\n\n`
    }
    return { action: "cancel" }
  }
  for (let attempt = 0; attempt < TRIES; attempt++) {
    const question: Question = { question: `${problem}${text}\n\n${howToAnswer(field)}`, timeout }
    const { answer, source } = await ctx.questions.inquire(ctx, attempt === 0 ? key : `${key}:${attempt}`, question)
    if (source !== "user") return { action: "cancel" }
    if (answer.trim().toLowerCase() === DECLINE.toLowerCase()) return { action: "decline" }
    const parsed = parseField(field, answer.trim())
    if ("value" in parsed) return parsed
    problem = `That does not fit: ${parsed.error}.\n\n`
  }
  return { action: "cancel" }
}

/** A field answered by buttons: a boolean, or a single choice from an enum (titled or not). The
 *  server's default is marked; an optional field can be left out. */
function choicesOf(field: Field): Array<{ label: string; value: unknown }> | undefined {
  const options = plainChoices(field.schema)
  if (!options) return undefined
  const fallback = (field.schema as { default?: unknown }).default
  const marked = options.map((c) => (c.value === fallback ? { ...c, label: `${c.label} (default)` } : c))
  return field.required ? marked : [...marked, { label: LEAVE_OUT, value: undefined }]
}

function plainChoices(schema: PrimitiveSchemaDefinition): Array<{ label: string; value: unknown }> | undefined {
  if (schema.type === "boolean") return [{ label: "Yes", value: true }, { label: "No", value: false }]
  if (schema.type !== "string") return undefined
  if ("oneOf" in schema && Array.isArray(schema.oneOf)) return schema.oneOf.map((o) => ({ label: o.title || o.const, value: o.const }))
  if ("enum" in schema && Array.isArray(schema.enum)) {
    const names = "enumNames" in schema && Array.isArray(schema.enumNames) ? schema.enumNames : []
    return schema.enum.map((value, i) => ({ label: names[i] ?? value, value }))
  }
  return undefined
}

function fieldText(field: Field): string {
  const { title, description } = field.schema as { title?: string; description?: string }
  return `*${title ?? field.key}*${description ? ` — ${description}` : ""}`
}

function howToAnswer(field: Field): string {
  const schema = field.schema as { type: string; default?: unknown; items?: { enum?: string[]; anyOf?: Array<{ const: string; title?: string }> } }
  const what =
    schema.type === "array"
      ? `Reply with one or more of: ${multiChoices(schema.items).map((c) => c.label).join(", ")} (separated by commas)`
      : schema.type === "number" || schema.type === "integer"
        ? `Reply with ${schema.type === "integer" ? "a whole number" : "a number"}`
        : "Reply with text"
  const optional = field.required ? "" : `, “${EMPTY}” to leave it out`
  return `_${what}${optional}, “${DECLINE}” to decline, /skip to cancel._`
}

function multiChoices(items: { enum?: string[]; anyOf?: Array<{ const: string; title?: string }> } | undefined): Array<{ label: string; value: string }> {
  if (items?.anyOf) return items.anyOf.map((o) => ({ label: o.title ?? o.const, value: o.const }))
  return (items?.enum ?? []).map((value) => ({ label: value, value }))
}

/** A typed answer as the field's type, checked against its schema (formats, bounds). */
function parseField(field: Field, text: string): { value: unknown } | { error: string } {
  if (text === EMPTY && !field.required) return { value: undefined }
  const schema = field.schema as { type: string; items?: Parameters<typeof multiChoices>[0] }
  let value: unknown = text
  if (schema.type === "number" || schema.type === "integer") value = text === "" ? Number.NaN : Number(text.replace(",", "."))
  if (schema.type === "array") {
    const choices = multiChoices(schema.items)
    const picked = text.split(",").map((part) => part.trim()).filter(Boolean)
    const values = picked.map((part) => choices.find((c, i) => c.label.toLowerCase() === part.toLowerCase() || String(i + 1) === part)?.value)
    if (values.some((v) => v === undefined)) return { error: `pick from ${choices.map((c) => c.label).join(", ")}` }
    value = values
  }
  const check = checker(field.schema).safeParse(value)
  return check.success ? { value: check.data } : { error: check.error.issues.map((issue) => issue.message).join("; ") }
}

function checker(schema: PrimitiveSchemaDefinition): z.ZodType {
  try {
    return z.fromJSONSchema(schema as never)
  } catch {
    return z.unknown()
  }
}
