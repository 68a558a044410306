/** The protocol test server (mcp-protocol.ts) on stdio: `node --import tsx test/fakes/mcp-protocol-stdio.ts`. */
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { protocolMcpServer } from "./mcp-protocol.ts"

// PROTO_INSTRUCTIONS: other instructions than the usual.
await protocolMcpServer(process.env.PROTO_INSTRUCTIONS || undefined).connect(new StdioServerTransport())
