/** What an error says, for a log line, a tool result or a message: its message, or the thrown value. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
