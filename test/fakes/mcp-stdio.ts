/**
 * A tiny stdio MCP server for the tests (the tools of mcp-tools.ts). Run it as
 * `node --import tsx test/fakes/mcp-stdio.ts`. With FAKE_FAIL_START set it writes a reason to
 * stderr and exits before speaking MCP, like a server missing its token.
 */
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { fakeMcpServer } from "./mcp-tools.ts"

if (process.env.FAKE_FAIL_START) {
  process.stderr.write(`fake server: ${process.env.FAKE_FAIL_START}\n`)
  process.exit(1)
}
const server = fakeMcpServer({
  crash: () => {
    process.stderr.write("fake server: crashing on purpose\n")
    process.exit(3)
  },
})
await server.connect(new StdioServerTransport())
process.stderr.write("fake server: ready\n")
