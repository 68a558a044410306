import type { MarkedExtension } from "marked"

/**
 * Markdown to ANSI for a terminal (headings, emphasis, lists, code, tables, links), through
 * marked and marked-terminal. Loaded only when the console is a terminal: on pipes replies stay
 * the plain Markdown the Teller wrote, which is what a script wants.
 */
export async function terminalMarkdown(): Promise<(markdown: string) => string> {
  const [{ Marked }, { markedTerminal }] = await Promise.all([import("marked"), import("marked-terminal")])
  // marked-terminal's types are written against an older marked; the extension object is the same.
  const marked = new Marked(markedTerminal({ reflowText: false, tab: 2 }) as MarkedExtension)
  return (markdown) => (marked.parse(markdown, { async: false }) as string).replace(/\n+$/, "")
}
