import { z } from "zod"
import { defineTool, type ToolContext } from "./tool.ts"

export const READ_RESOURCE = "read_resource"

/** The MCP servers' resources (implemented by the MCP hub). */
export interface ResourceReader {
  /** The result as MCP tool results are given to the model (text, images saved in the workspace). */
  read(server: string, uri: string, ctx: ToolContext): Promise<unknown>
}

const parameters = z.object({
  server: z.string().min(1).describe("The MCP server the resource is from (the prefix of its tools, e.g. github for github_*)."),
  uri: z.string().min(1).describe("The resource's URI, as a tool result named it (resource link or embedded resource)."),
})

/** Reads a resource an MCP tool pointed to (a resource link). Rules match `<server> <uri>`. */
export function createReadResourceTool(reader: ResourceReader) {
  return defineTool({
    id: READ_RESOURCE,
    description: "Read a resource of an MCP server by its URI — e.g. a resource link a tool result named. Text comes back as text; an image is saved in the workspace.",
    parameters,
    pattern: (args) => `${args.server} ${args.uri}`,
    // A resource is what a server holds — a file, a page, an issue — written by anyone.
    untrustedOutput: true,
    execute: ({ server, uri }, ctx) => reader.read(server, uri, ctx),
  })
}
