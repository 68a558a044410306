import { mkdirSync } from "node:fs"
import { pathToFileURL } from "node:url"
import type { Root } from "@modelcontextprotocol/sdk/types.js"
import { userWorkspaceDir } from "../tool/workspace.ts"
import type { ToolContext } from "../tool/tool.ts"

/**
 * The one root a server is given: the workspace folder of the user whose call it serves
 * (`file://<DATA_DIR>/workspace/<user>`), nothing outside it. The folder is made if it is new,
 * since a server may refuse a root that does not exist.
 */
export function workspaceRoot(ctx: Pick<ToolContext, "workspaceDir" | "user">): Root {
  const dir = userWorkspaceDir(ctx.workspaceDir, ctx.user)
  mkdirSync(dir, { recursive: true })
  return { uri: pathToFileURL(dir).href, name: "workspace" }
}
