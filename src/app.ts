import { readFileSync } from "node:fs"
import { join } from "node:path"
import type { LanguageModel } from "ai"
import type { Logger } from "pino"
import { loadAgents, type Agent } from "./agent/agents.ts"
import { channelOf, type Channel, type ChannelHandlers } from "./channel/channel.ts"
import { connectionTag, newMemberId } from "./cluster/member-id.ts"
import { ClusterNode } from "./cluster/node.ts"
import { ZodError } from "zod"
import { checkProvider, ConfigError, PROVIDERS, type Config, type ModelSpec } from "./config/config.ts"
import { portError } from "./config/ports.ts"
import { countedModel, resolveModel, type ModelCallSink } from "./model/model.ts"
import { forRole, parseConfig } from "./permission/roles.ts"
import { Store } from "./store/store.ts"
import { Supervisor } from "./supervisor/supervisor.ts"
import { HooksServer } from "./hooks/hooks.ts"
import type { McpHub } from "./mcp/hub.ts"
import { keepHealthFile, mcpHealthFile } from "./mcp/health-file.ts"
import { searchProvider } from "./search/provider.ts"
import { allTools, builtInToolIds } from "./tool/registry.ts"
import type { UsageSample } from "./usage/usage.ts"
import type { WorkObserver } from "./core/types.ts"
import type { MemoryService } from "./tool/capabilities.ts"

export const PROMPTS_DIR = new URL("../prompts/", import.meta.url).pathname

export interface App {
  supervisor: Supervisor
  store: Store
  /** Where POST /hooks/<name> listens, when HOOKS_TOKEN is set. */
  hooksPort?: number
  /** The MCP servers of MCP_CONFIG, when it is set. */
  mcp?: McpHub
  /** This process in a cluster (STORE_URL on Postgres). */
  cluster?: ClusterNode
  /** Whether this process runs the channel now (in a cluster, an exclusive one runs in the leader only). */
  runsHere(channel: Channel): boolean
  /** Takes nothing new in (channels, hooks, triggers, in a cluster tasks) while what is under way goes on. */
  stopInput(): Promise<void>
  /** Resolves once nothing is queued, running or unsent here (the Supervisor's work and, in a
   *  cluster, the tasks this process runs). */
  idle(): Promise<void>
  stop(): Promise<void>
}

/**
 * Wires Steward together: store, agents, tools, rules, Supervisor (which wires the outbox), channels. The
 * channels are given from outside so tests and the benchmark can plug in their own.
 */
export async function startApp(
  config: Config,
  log: Logger,
  channels: Channel[],
  memory: SupervisorMemory,
  modelOf?: (agent: Agent) => LanguageModel,
  /** Tests listen on 127.0.0.1 and a free port, and may bring their own prompts. The model
   *  calls of the configured models are counted in `metrics`; every call's tokens go to `onUsage`. */
  options: { hooksHost?: string; hooksPort?: number; promptsDir?: string; metrics?: ModelCallSink & WorkObserver; onUsage?: (sample: UsageSample) => void; onFatal?: (error: Error) => void } = {},
): Promise<App> {
  const model = modelOf ?? modelFor(config, options.metrics)
  const promptsDir = options.promptsDir ?? PROMPTS_DIR
  const agents = loadAgents(promptsDir)
  // A worker type's own model is configuration too: checked now, not at its first task.
  for (const agent of agents.workers.values()) if (agent.model) checkProvider(specOf(agent), config)
  const workerTypes = [...agents.workers.values()].map((w) => ({ name: w.name, description: w.description }))
  const extra = config.permissionsFile ? readPermissions(config.permissionsFile) : undefined
  // The MCP client library is loaded only when there are servers to talk to.
  const mcp = config.mcp.configFile ? await (await import("./mcp/hub.ts")).startMcp(config, log, builtInToolIds()) : undefined
  const stopHealthFile = mcp && keepHealthFile(mcpHealthFile(config.dataDir), () => mcp.health())
  const tools = [...allTools(workerTypes, { fetch: config.fetch, workspace: config.workspace, search: searchProvider(config.search), resources: mcp }), ...(mcp?.families() ?? [])]
  const rules = { teller: forRole("teller", extra), planner: forRole("planner", extra), worker: forRole("worker", extra, mcp?.grants()) }
  // In a cluster the store's connections carry this process's tag: see ClusterLink.connected.
  const member = newMemberId()
  const store = await Store.open(config.dataDir, config.storeUrl, { applicationName: connectionTag(member) })
  const cluster = config.storeUrl ? await ClusterNode.join(config, store, config.storeUrl, member, log, options.onFatal ?? ((error) => log.fatal({ err: error }, "cluster: this process must stop"))) : undefined
  const byName = new Map(channels.map((channel) => [channel.name, channel]))
  const running = new Supervisor({ config, store, channels: byName, agents, model, tools, rules, memory, log, commandsDir: join(promptsDir, "commands"), onUsage: (sample) => {
      // Usage is a record, not state work depends on: a failed write is logged, never retried.
      store.owner.recordUsage(sample).catch((error: unknown) => log.warn({ err: error }, "could not record a model call's usage"))
      options.onUsage?.(sample)
    },
    observer: options.metrics,
    runTask: cluster?.runTask,
    shared: cluster !== undefined,
    workerInstructions: mcp && (() => mcp.instructions()),
  })
  const known = (await store.conversations()).map((conversation) => conversation.id)
  const startChannel = (channel: Channel, onMessage: ChannelHandlers["onMessage"], tidy = true) => {
    const ours = (id: string) => channelOf(id) === channel.name
    const owners = [...config.allowedUsers.users].filter(ours)
    return channel.start({ onMessage, commands: running.gate.commands(), conversations: known.filter(ours), owners, state: store.channelState(channel.name), tidy })
  }
  if (cluster) {
    // Input any process may take goes to the leader; a channel only one may run starts with
    // leading. What is shown (busy indicators, status messages) is the leader's: a process
    // leaves it alone until it leads, and then clears what the one before left.
    const shared = channels.filter((channel) => !channel.exclusive)
    for (const channel of shared) await startChannel(channel, (message) => cluster.take(message), false)
    await cluster.start(running, {
      beforeLeading: async () => {
        for (const channel of shared) await channel.tidy?.()
      },
      onLeader: async () => {
        for (const channel of channels) if (channel.exclusive) await startChannel(channel, (message) => running.gate.take(message))
      },
    })
  } else {
    await running.start()
    for (const channel of channels) await startChannel(channel, (message) => running.gate.take(message))
  }
  const hooks = config.hooks.token ? new HooksServer(config.hooks.token, (name) => (cluster ? cluster.raise(name) : running.scheduler.raise(name)), log) : undefined
  const wantedHooksPort = options.hooksPort ?? config.hooks.port
  const hooksHost = options.hooksHost ?? config.hooks.host
  const hooksPort = await hooks?.start(wantedHooksPort, hooksHost).catch((error: unknown) => {
    throw portError("HOOKS_PORT", wantedHooksPort, error, hooksHost)
  })
  return {
    supervisor: running,
    store,
    hooksPort,
    mcp,
    cluster,
    runsHere: (channel) => !cluster || !channel.exclusive || cluster.leads,
    async stopInput() {
      for (const channel of channels) await channel.stop()
      await hooks?.stop()
      await running.scheduler.stop()
      cluster?.stopClaiming()
    },
    async idle() {
      await Promise.all([running.idle(), cluster?.idle()])
    },
    async stop() {
      await hooks?.stop()
      for (const channel of channels) await channel.stop()
      // Runs in hand are handed back before the Supervisor stops, the leader lock only after.
      await cluster?.stopWork()
      await running.stop()
      await cluster?.stop()
      stopHealthFile?.()
      await mcp?.stop()
      await store.close()
    },
  }
}

/** Extra permission rules are configuration: a bad file is reported like a bad variable. */
function readPermissions(path: string) {
  try {
    return parseConfig(JSON.parse(readFileSync(path, "utf8")))
  } catch (error) {
    const reason = error instanceof ZodError ? error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ") : error instanceof Error ? error.message : String(error)
    throw new ConfigError("PERMISSIONS_FILE", `PERMISSIONS_FILE: expected a JSON file of rules per role ({"worker": [{"permission", "pattern", "action"}]}): ${reason}`)
  }
}

/** The memory service, plus what the Supervisor needs of its files: the folder of a user's notes
 *  (memory.md for the prompt, /memory, forget — src/memory/edit.ts). */
export type SupervisorMemory = MemoryService & { recordCompaction(user: string, summary: string): Promise<void>; folder(user: string): string }

/** One model instance per agent: a worker type may name its own in its front matter. */
function modelFor(config: Config, metrics?: ModelCallSink) {
  const cache = new Map<string, LanguageModel>()
  return (agent: Agent) => {
    let model = cache.get(agent.name)
    if (!model) {
      model = resolveModel(agent.model ? specOf(agent) : config.models[agent.role === "compaction" ? "teller" : agent.role], config)
      if (metrics) model = countedModel(model, agent.role, metrics)
      cache.set(agent.name, model)
    }
    return model
  }
}

function specOf(agent: Agent): ModelSpec {
  const at = agent.model!.indexOf(":")
  const provider = agent.model!.slice(0, at)
  const variable = `prompts/workers/${agent.name}.md`
  if (!PROVIDERS.includes(provider as never)) throw new ConfigError(variable, `${variable}: model provider "${provider}" is not one of ${PROVIDERS.join(", ")}`)
  return { provider: provider as ModelSpec["provider"], id: agent.model!.slice(at + 1), variable }
}
