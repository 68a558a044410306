import { askUserTool } from "./ask-user.ts"
import { cancelTaskTool } from "./cancel-task.ts"
import { createDelegateTool, type WorkerType } from "./delegate.ts"
import { fetchUrlTool } from "./fetch-url.ts"
import { getHistoryByTimeTool } from "./get-history-by-time.ts"
import { getRecentHistoryTool } from "./get-recent-history.ts"
import { listFilesTool } from "./list-files.ts"
import { listTasksTool } from "./list-tasks.ts"
import { readFileTool } from "./read-file.ts"
import { rememberTool } from "./remember.ts"
import { replyTool } from "./reply.ts"
import { scheduleTool } from "./schedule.ts"
import { searchMemoryTool } from "./search-memory.ts"
import type { ToolDefinition } from "./tool.ts"
import { createWebSearchTool, WEB_SEARCH } from "./web-search.ts"
import { writeFileTool } from "./write-file.ts"
import type { SearchProvider } from "../search/result.ts"

/** Every tool Steward has. Which role is offered which is decided by the permission rules.
 *  web_search is one only when a search provider is configured. */
export function allTools(workers: readonly WorkerType[], search?: SearchProvider): ToolDefinition[] {
  return [
    createDelegateTool(workers),
    replyTool,
    rememberTool,
    askUserTool,
    listTasksTool,
    cancelTaskTool,
    getRecentHistoryTool,
    getHistoryByTimeTool,
    searchMemoryTool,
    scheduleTool,
    fetchUrlTool,
    readFileTool,
    writeFileTool,
    listFilesTool,
    ...(search ? [createWebSearchTool(search)] : []),
  ] as ToolDefinition[]
}

/** The names built-in tools have or may have, which tools from elsewhere (MCP) must not take. */
export function builtInToolIds(): string[] {
  return [...allTools([]).map((tool) => tool.id), WEB_SEARCH]
}
