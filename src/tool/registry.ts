import { askUserTool } from "./ask-user.ts"
import { cancelTaskTool } from "./cancel-task.ts"
import { createDelegateTool, type WorkerType } from "./delegate.ts"
import { createFetchUrlTool, type FetchUrlSettings } from "./fetch-url.ts"
import { forgetTool } from "./forget.ts"
import { getHistoryByTimeTool } from "./get-history-by-time.ts"
import { getRecentHistoryTool } from "./get-recent-history.ts"
import { listFilesTool } from "./list-files.ts"
import { listTasksTool } from "./list-tasks.ts"
import { readFileTool } from "./read-file.ts"
import { createReadResourceTool, READ_RESOURCE, type ResourceReader } from "./read-resource.ts"
import { rememberTool } from "./remember.ts"
import { replyTool } from "./reply.ts"
import { scheduleTool } from "./schedule.ts"
import { searchMemoryTool } from "./search-memory.ts"
import { sendFileTool } from "./send-file.ts"
import { setTimeZoneTool } from "./set-timezone.ts"
import type { ToolDefinition } from "./tool.ts"
import { createWebSearchTool, WEB_SEARCH } from "./web-search.ts"
import { createWriteFileTool, type WriteFileSettings } from "./write-file.ts"
import type { SearchProvider } from "../search/result.ts"

/** What the operator configured for the tools that need it; web_search is a tool only when a
 *  search provider is configured. */
export interface ToolSettings {
  fetch: FetchUrlSettings
  workspace: WriteFileSettings
  search?: SearchProvider
  /** MCP servers' resources: turns on read_resource. */
  resources?: ResourceReader
}

/** Every tool Steward has. Which role is offered which is decided by the permission rules. */
export function allTools(workers: readonly WorkerType[], settings: ToolSettings): ToolDefinition[] {
  return [
    createDelegateTool(workers),
    replyTool,
    sendFileTool,
    rememberTool,
    forgetTool,
    askUserTool,
    listTasksTool,
    cancelTaskTool,
    getRecentHistoryTool,
    getHistoryByTimeTool,
    searchMemoryTool,
    setTimeZoneTool,
    scheduleTool,
    createFetchUrlTool(settings.fetch),
    readFileTool,
    createWriteFileTool(settings.workspace),
    listFilesTool,
    ...(settings.search ? [createWebSearchTool(settings.search)] : []),
    ...(settings.resources ? [createReadResourceTool(settings.resources)] : []),
  ] as ToolDefinition[]
}

/** The names built-in tools have or may have, which tools from elsewhere (MCP) must not take. */
export function builtInToolIds(): string[] {
  const unused: ToolSettings = { fetch: { maxBytes: 0, allowHosts: { hosts: new Set(), cidrs: [] } }, workspace: { quotaBytes: 0 } }
  return [...allTools([], unused).map((tool) => tool.id), WEB_SEARCH, READ_RESOURCE]
}
