import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  ListRootsRequestSchema,
  McpError,
  ToolListChangedNotificationSchema,
  type CreateMessageRequest,
  type CreateMessageResult,
  type ElicitRequestFormParams,
  type ElicitResult,
  type ListRootsResult,
} from "@modelcontextprotocol/sdk/types.js"

const CLIENT_INFO = { name: "steward", version: "0.1.0" }

/** What a server may ask of Steward, answered for the call it serves (see CallsInFlight). */
export interface ServerRequests {
  elicit(params: ElicitRequestFormParams): Promise<ElicitResult>
  sample(params: CreateMessageRequest["params"]): Promise<CreateMessageResult>
  roots(): ListRootsResult
  /** `notifications/tools/list_changed`: the server's tools are listed again. */
  toolsChanged(): void
}

/**
 * A client that speaks the protocol's client side: elicitation (form mode: a question to the
 * user), sampling (the calling Worker's model), roots (the user's workspace, with
 * `roots/list_changed`), and the server's `tools/list_changed`.
 */
export function stewardClient(requests: ServerRequests): Client {
  const client = new Client(CLIENT_INFO, { capabilities: { elicitation: { form: {} }, sampling: {}, roots: { listChanged: true } } })
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    // Only form mode is declared; a URL request would send the user to a page Steward cannot vouch for.
    if (request.params.mode === "url") throw new McpError(ErrorCode.InvalidParams, "Steward accepts form elicitation only")
    return requests.elicit(request.params as ElicitRequestFormParams)
  })
  client.setRequestHandler(CreateMessageRequestSchema, (request) => requests.sample(request.params))
  client.setRequestHandler(ListRootsRequestSchema, () => requests.roots())
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => requests.toolsChanged())
  return client
}
