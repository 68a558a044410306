import type { ToolCallPart, ToolResultPart } from "ai"
import type { ToolContext, ToolDefinition } from "../tool/tool.ts"
import { untrusted } from "../trust/envelope.ts"

/** What running a tool call came to: its value, or the error the model is given (`ran`: the
 *  tool ran and failed, as opposed to a refusal before it ran). */
export type Output = { ok: true; value: unknown } | { ok: false; error: string; ran?: true }

/** Where outside content came from, for its envelope: the tool and what it was used on. */
export function sourceOf(def: ToolDefinition, call: ToolCallPart, role: ToolContext["role"]): string {
  const parsed = def.parameters.safeParse(call.input)
  const on = parsed.success ? (def.pattern?.(parsed.data, role) ?? "") : ""
  return `${def.id} ${on}`.trim().slice(0, 200)
}

/** A tool's result as the log keeps it. Outside content (`untrustedFrom`) is handed to the model
 *  in an envelope; refusals made before the tool ran (permissions, bad input) are Steward's own. */
export function toolResult(call: ToolCallPart, output: Output, untrustedFrom?: string | false): ToolResultPart {
  const outside = untrustedFrom && (output.ok || output.ran)
  const shown: ToolResultPart["output"] = output.ok
    ? outside ? { type: "text", value: untrusted(untrustedFrom, JSON.stringify(output.value ?? null)) } : { type: "json", value: (output.value ?? null) as never }
    : { type: "error-text", value: outside ? untrusted(untrustedFrom, output.error) : output.error }
  return { type: "tool-result", toolCallId: call.toolCallId, toolName: call.toolName, output: shown }
}
