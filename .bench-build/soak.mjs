var __defProp = Object.defineProperty;
var __getOwnPropNames = Object.getOwnPropertyNames;
var __esm = (fn, res, err) => function __init() {
  if (err) throw err[0];
  try {
    return fn && (res = (0, fn[__getOwnPropNames(fn)[0]])(fn = 0)), res;
  } catch (e) {
    throw err = [e], e;
  }
};
var __export = (target, all) => {
  for (var name in all)
    __defProp(target, name, { get: all[name], enumerable: true });
};

// src/schedule/cron.ts
import { Cron } from "croner";
function parseCron(expression, timezone) {
  const written = expression.trim();
  if (timezone !== void 0 && !isTimeZone(timezone)) return { error: `unknown IANA time zone "${timezone}" (e.g. "Europe/Berlin")` };
  const read = readFields(written);
  if ("error" in read) return read;
  let cron;
  try {
    cron = new Cron(read.pattern, {
      timezone,
      paused: true,
      mode: "5-or-6-parts",
      fixedTimeRule: "no-wildcard",
      domAndDow: read.domAndDow
    });
  } catch (error) {
    return { error: `not a valid cron expression: ${String(error instanceof Error ? error.message : error).replace(/^CronPattern:\s*/, "")}` };
  }
  if (!cron.nextRun(/* @__PURE__ */ new Date())) return { error: `"${written}" never matches a date from now on (e.g. 31 February)` };
  const schedule = {
    expression: written,
    timezone,
    kind: read.fixedTime ? "fixed-time" : "wildcard",
    seconds: read.seconds,
    next: (after) => cron.nextRun(after) ?? void 0,
    nextRuns: (count, after) => cron.nextRuns(count, after),
    latest(from, to) {
      const [last] = cron.previousRuns(1, new Date(to.getTime() + 1));
      return last && last >= from ? last : void 0;
    }
  };
  return { schedule };
}
function readFields(written) {
  if (written.startsWith("@")) {
    const nickname = written.toLowerCase();
    if (!NICKNAMES.has(nickname)) return { error: `unknown nickname "${written}": use one of ${[...NICKNAMES].join(", ")}` };
    return { pattern: nickname, fixedTime: nickname !== "@hourly", domAndDow: false, seconds: void 0 };
  }
  const fields = written.split(/\s+/).filter(Boolean);
  if (fields.length !== 5 && fields.length !== 6) {
    return { error: `not a valid cron expression: expected 5 or 6 fields but got ${fields.length} (${FIELDS}, with seconds first if 6)` };
  }
  const seconds = fields.length === 6 ? fields.shift() : void 0;
  const [minute, hour, dom, month, dow] = fields;
  const fixedTime = [seconds, minute, hour].every((field) => field === void 0 || !startsWild(field));
  const time = fixedTime ? [seconds === void 0 ? void 0 : valuesOf(seconds, 59), valuesOf(minute, 59), valuesOf(hour, 23)] : [seconds, minute, hour];
  const pattern = [...time, dom, month, dow].filter((field) => field !== void 0).join(" ");
  return { pattern, fixedTime, domAndDow: startsWild(dom) || startsWild(dow), seconds };
}
function startsWild(field) {
  return field.startsWith("*") || field.startsWith("?");
}
function valuesOf(field, max) {
  const values = /* @__PURE__ */ new Set();
  for (const part of field.split(",")) {
    const match2 = /^(?:(\*)|(\d+)(?:-(\d+))?)(?:\/(\d+))?$/.exec(part);
    if (!match2) return field;
    const [, star, low, high, step] = match2;
    const first = star ? 0 : Number(low);
    const last = star ? max : high !== void 0 ? Number(high) : step !== void 0 ? max : first;
    const by = step === void 0 ? 1 : Number(step);
    if (!star && high === void 0 && step !== void 0 || first > last || last > max || by < 1) return field;
    for (let value = first; value <= last; value += by) values.add(value);
  }
  return [...values].sort((a, b) => a - b).join(",");
}
function parseScheduleCron(expression, timezone) {
  const read = parseCron(expression, timezone);
  if ("error" in read || read.schedule.seconds === void 0 || /^\d+$/.test(read.schedule.seconds)) return read;
  return { error: "runs more than once a minute: give the seconds field one value" };
}
function isTimeZone(name) {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: name });
    return true;
  } catch {
    return false;
  }
}
var NICKNAMES, FIELDS;
var init_cron = __esm({
  "src/schedule/cron.ts"() {
    "use strict";
    NICKNAMES = /* @__PURE__ */ new Set(["@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"]);
    FIELDS = "minute hour day-of-month month day-of-week";
  }
});

// src/web/address-policy.ts
import ipaddr from "ipaddr.js";
import { z } from "zod";
function nonPublicRange(address) {
  if (!ipaddr.isValid(address)) return "not an IP address";
  return rangeOf(ipaddr.parse(address));
}
function rangeOf(address) {
  const embedded = embeddedIPv4(address);
  if (embedded) return rangeOf(embedded);
  const range = address.range();
  if (range !== "unicast") return range;
  if (address.kind() === "ipv6" && !address.match(GLOBAL_UNICAST_V6)) return "not global unicast";
  return void 0;
}
function embeddedIPv4(address) {
  if (address.kind() !== "ipv6") return void 0;
  const v6 = address;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address();
  if (v6.range() === NAT64_RANGE) return ipaddr.fromByteArray(v6.toByteArray().slice(12));
  return void 0;
}
function canonical(address) {
  return address.kind() === "ipv6" && address.isIPv4MappedAddress() ? address.toIPv4Address() : address;
}
function canonicalCidr([address, bits]) {
  if (address.kind() === "ipv6" && address.isIPv4MappedAddress() && bits >= 96) return [canonical(address), bits - 96];
  return [address, bits];
}
function hostKey(host) {
  return host.toLowerCase().replace(/\.+$/, "");
}
function bare(host) {
  return host.replace(/^\[(.*)\]$/, "$1");
}
var GLOBAL_UNICAST_V6, NAT64_RANGE, BlockedDestination, NO_EXCEPTIONS, ALLOW_HOSTS_EXPECTED, allowHostsSchema, AddressPolicy;
var init_address_policy = __esm({
  "src/web/address-policy.ts"() {
    "use strict";
    GLOBAL_UNICAST_V6 = ipaddr.parseCIDR("2000::/3");
    NAT64_RANGE = "rfc6052";
    BlockedDestination = class extends Error {
      name = "BlockedDestination";
    };
    NO_EXCEPTIONS = { hosts: /* @__PURE__ */ new Set(), cidrs: [] };
    ALLOW_HOSTS_EXPECTED = "expected a comma-separated list of hostnames and CIDRs, e.g. wiki.internal,10.1.2.0/24,127.0.0.1";
    allowHostsSchema = z.string().transform((value, ctx) => {
      const allow2 = { hosts: /* @__PURE__ */ new Set(), cidrs: [] };
      for (const raw of value.split(",").map((entry) => entry.trim()).filter((entry) => entry !== "")) {
        const entry = raw.replace(/^\[(.*)\]$/, "$1");
        if (ipaddr.isValidCIDR(entry)) allow2.cidrs.push(canonicalCidr(ipaddr.parseCIDR(entry)));
        else if (ipaddr.isValid(entry)) {
          const address = canonical(ipaddr.parse(entry));
          allow2.cidrs.push([address, address.kind() === "ipv4" ? 32 : 128]);
        } else if (z.hostname().safeParse(entry).success && /[a-z]/i.test(entry)) allow2.hosts.add(hostKey(entry));
        else {
          ctx.addIssue({ code: "custom", message: ALLOW_HOSTS_EXPECTED, params: { got: `entry ${JSON.stringify(raw)}` } });
          return z.NEVER;
        }
      }
      return allow2;
    });
    AddressPolicy = class {
      constructor(allow2 = NO_EXCEPTIONS) {
        this.allow = allow2;
      }
      allow;
      /** An allowed hostname skips the address checks (it is the operator's own, wherever it points). */
      hostAllowed(host) {
        return this.allow.hosts.has(hostKey(bare(host)));
      }
      /** Refusal of a URL's host before any lookup: names that always mean this machine, and IP literals. */
      hostRefusal(host) {
        const name = bare(host);
        if (this.hostAllowed(name)) return void 0;
        const key = hostKey(name);
        if (key === "localhost" || key.endsWith(".localhost")) return `${name} is this machine, which fetch_url may not reach`;
        if (ipaddr.isValid(name)) return this.addressRefusal(name, name);
        return void 0;
      }
      /** Refusal of one resolved (or literal) address of `host`, or undefined when it may be reached. */
      addressRefusal(host, address) {
        if (this.hostAllowed(host)) return void 0;
        const range = nonPublicRange(address);
        if (range === void 0) return void 0;
        if (range !== "not an IP address" && this.inAllowedCidr(ipaddr.parse(address))) return void 0;
        return `${bare(host)} leads to ${address} (${range}), which fetch_url may not reach`;
      }
      inAllowedCidr(address) {
        const wanted = canonical(address);
        return this.allow.cidrs.some(([network, bits]) => network.kind() === wanted.kind() && wanted.match(network, bits));
      }
    };
  }
});

// src/config/fields.ts
import { z as z2 } from "zod";
function wholeNumber(min, max) {
  const expected = max === void 0 ? `expected a whole number of at least ${min}` : `expected a whole number from ${min} to ${max}`;
  return z2.string().regex(/^\d+$/, expected).transform(Number).pipe(z2.int(expected).min(min, expected).max(max ?? Number.MAX_SAFE_INTEGER, expected));
}
function badUser(entry) {
  const at2 = entry.indexOf(":");
  if (at2 <= 0) return ALLOWED_USERS_EXPECTED;
  const rule = USER_IDS[entry.slice(0, at2)];
  if (!rule) return `the channel must be one of ${Object.keys(USER_IDS).join(", ")}`;
  return rule.id.test(entry.slice(at2 + 1)) ? void 0 : rule.expected;
}
function redactUrl(text) {
  return text.replace(/^((?:[a-z][a-z0-9+.-]*:\/\/)?[^:/@\s]*:).*@/i, "$1***@").replace(/([?&]password=)[^&]*/gi, "$1***");
}
function tokenLike(pattern, expected) {
  return z2.string().transform((value, ctx) => {
    if (pattern.test(value)) return value;
    const shown = value.length > 6 ? `${value.slice(0, 6)}\u2026` : value;
    ctx.addIssue({ code: "custom", message: expected, params: { got: `${JSON.stringify(shown)} (${value.length} characters)` } });
    return z2.NEVER;
  });
}
var PROVIDERS, MODEL_EXPECTED, port, httpUrl, modelSpec, ALLOWED_USERS_EXPECTED, USER_IDS, allowedUsers, STORE_URL_EXPECTED, storeUrl, telegramToken, slackBotToken, slackAppToken;
var init_fields = __esm({
  "src/config/fields.ts"() {
    "use strict";
    PROVIDERS = ["openai", "anthropic", "openai-compatible"];
    MODEL_EXPECTED = `expected <provider>:<model-id>, e.g. openai:gpt-4.1-mini (providers: ${PROVIDERS.join(", ")})`;
    port = () => wholeNumber(1, 65535);
    httpUrl = () => z2.url({ protocol: /^https?$/, error: "expected an http(s) URL" });
    modelSpec = z2.string().regex(new RegExp(`^(${PROVIDERS.join("|")}):.+$`, "s"), MODEL_EXPECTED).transform((value) => {
      const at2 = value.indexOf(":");
      return { provider: value.slice(0, at2), id: value.slice(at2 + 1) };
    });
    ALLOWED_USERS_EXPECTED = "expected a comma-separated list of <channel>:<user-id>, e.g. telegram:1001,slack:U1001,console:local, or * for anyone";
    USER_IDS = {
      telegram: { id: /^\d+$/, expected: "a Telegram user id is a number, e.g. telegram:1001" },
      slack: { id: /^[UW][A-Z0-9]+$/, expected: "a Slack user id starts with U or W, e.g. slack:U1001" },
      console: { id: /^local$/, expected: "the console's one user is console:local" }
    };
    allowedUsers = z2.string().transform((value, ctx) => {
      const entries = value.split(",").map((entry) => entry.trim()).filter((entry) => entry !== "");
      if (entries.length === 0) {
        ctx.addIssue({ code: "custom", message: ALLOWED_USERS_EXPECTED });
        return z2.NEVER;
      }
      const result2 = { anyone: false, users: /* @__PURE__ */ new Set() };
      for (const entry of entries) {
        const problem = entry === "*" ? void 0 : badUser(entry);
        if (problem) {
          ctx.addIssue({ code: "custom", message: problem, params: { got: `entry ${JSON.stringify(entry)}` } });
          return z2.NEVER;
        }
        if (entry === "*") result2.anyone = true;
        else result2.users.add(entry);
      }
      return result2;
    });
    STORE_URL_EXPECTED = "expected postgres://user:password@host:port/database (or empty for SQLite in DATA_DIR)";
    storeUrl = z2.string().transform((value, ctx) => {
      if (URL.canParse(value) && /^postgres(ql)?:$/.test(new URL(value).protocol)) return value;
      ctx.addIssue({ code: "custom", message: STORE_URL_EXPECTED, params: { got: JSON.stringify(redactUrl(value)) } });
      return z2.NEVER;
    });
    telegramToken = tokenLike(/^\d+:[A-Za-z0-9_-]+$/, "expected <bot id>:<secret> as @BotFather gives it, e.g. 123456789:AAE\u2026");
    slackBotToken = tokenLike(/^xoxb-\S+$/, "expected the Bot User OAuth Token, which starts with xoxb- (OAuth & Permissions)");
    slackAppToken = tokenLike(/^xapp-\S+$/, "expected an app-level token, which starts with xapp- (Basic Information \u2192 App-Level Tokens)");
  }
});

// src/config/quotas.ts
function quotasOf(vars) {
  return {
    schedules: vars.QUOTA_SCHEDULES,
    minIntervalSeconds: vars.QUOTA_MIN_INTERVAL_SECONDS,
    memoryNoteChars: vars.QUOTA_MEMORY_NOTE_CHARS,
    memoryNotesPerDay: vars.QUOTA_MEMORY_NOTES_PER_DAY,
    uploadsPerDay: vars.QUOTA_UPLOADS_PER_DAY,
    tokensPerDay: vars.QUOTA_TOKENS_PER_DAY,
    messagesPerMinute: vars.QUOTA_MESSAGES_PER_MINUTE
  };
}
var QUOTA_VARIABLES;
var init_quotas = __esm({
  "src/config/quotas.ts"() {
    "use strict";
    init_fields();
    QUOTA_VARIABLES = {
      QUOTA_SCHEDULES: wholeNumber(0, 1e4).default(10),
      // 15 minutes: one schedule step can no longer create dozens of minute-by-minute jobs.
      QUOTA_MIN_INTERVAL_SECONDS: wholeNumber(60, 31536e3).default(900),
      QUOTA_MEMORY_NOTE_CHARS: wholeNumber(1, 2e4).default(2e3),
      QUOTA_MEMORY_NOTES_PER_DAY: wholeNumber(0, 1e6).default(50),
      QUOTA_UPLOADS_PER_DAY: wholeNumber(0, 1e6).default(50),
      QUOTA_TOKENS_PER_DAY: wholeNumber(0, 1e12).default(2e6),
      QUOTA_MESSAGES_PER_MINUTE: wholeNumber(1, 1e4).default(20)
    };
  }
});

// src/config/platforms.ts
function halfSetPlatform(present) {
  for (const rule of NEEDS) {
    if (present[rule.variable] !== void 0 && present[rule.needs] === void 0) return { variable: rule.needs, expected: `${rule.expected}, because ${rule.variable} is set` };
  }
  return void 0;
}
function serverTimeZone(tz) {
  const resolved = Intl.DateTimeFormat().resolvedOptions().timeZone;
  if (tz === void 0) return { zone: resolved ?? "UTC" };
  if (tz.startsWith(":/")) return { zone: resolved ?? "UTC" };
  const name = tz.startsWith(":") ? tz.slice(1) : tz;
  if (!isTimeZone(name)) return { error: `TZ: expected an IANA time zone, e.g. Europe/Berlin (or unset TZ and set DEFAULT_TIMEZONE), got ${JSON.stringify(tz)}` };
  return { zone: name };
}
var SLACK_BOT, TELEGRAM_BOT, NEEDS;
var init_platforms = __esm({
  "src/config/platforms.ts"() {
    "use strict";
    init_cron();
    SLACK_BOT = "expected the Bot User OAuth Token (xoxb-\u2026)";
    TELEGRAM_BOT = "expected the token @BotFather gave (<bot id>:<secret>)";
    NEEDS = [
      { variable: "SLACK_APP_TOKEN", needs: "SLACK_BOT_TOKEN", expected: SLACK_BOT },
      { variable: "SLACK_SIGNING_SECRET", needs: "SLACK_BOT_TOKEN", expected: SLACK_BOT },
      { variable: "TELEGRAM_WEBHOOK_URL", needs: "TELEGRAM_BOT_TOKEN", expected: TELEGRAM_BOT },
      { variable: "TELEGRAM_WEBHOOK_SECRET", needs: "TELEGRAM_BOT_TOKEN", expected: TELEGRAM_BOT },
      { variable: "TELEGRAM_WEBHOOK_SECRET", needs: "TELEGRAM_WEBHOOK_URL", expected: "expected the public https URL Telegram posts updates to (or unset TELEGRAM_WEBHOOK_SECRET for long polling)" }
    ];
  }
});

// src/config/settings.ts
var LOG_LEVELS, SEARCH_PROVIDERS, ConfigError;
var init_settings = __esm({
  "src/config/settings.ts"() {
    "use strict";
    LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];
    SEARCH_PROVIDERS = ["searxng", "brave", "tavily"];
    ConfigError = class extends Error {
      constructor(variable, message) {
        super(message);
        this.variable = variable;
      }
      variable;
      name = "ConfigError";
    };
  }
});

// src/config/config.ts
import { resolve } from "node:path";
import { z as z3 } from "zod";
function notSet(variable, expected) {
  return new ConfigError(variable, `${variable} is not set: ${expected}`);
}
function issueError(issue, present) {
  const variable = String(issue.path[0]);
  const raw = present[variable];
  if (raw === void 0) return notSet(variable, issue.message);
  const given = issue.code === "custom" && typeof issue.params?.got === "string" ? issue.params.got : JSON.stringify(raw);
  return new ConfigError(variable, `${variable}: ${issue.message}, got ${given}`);
}
function loadConfig(env = process.env) {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== void 0 && value !== ""));
  const parsed = schema.safeParse(present);
  if (!parsed.success) throw issueError(parsed.error.issues[0], present);
  const vars = parsed.data;
  const halfSet = halfSetPlatform(present);
  if (halfSet) throw notSet(halfSet.variable, halfSet.expected);
  const server = serverTimeZone(present.TZ);
  if ("error" in server) throw new ConfigError("TZ", server.error);
  const defaultTimeZone = vars.DEFAULT_TIMEZONE ?? server.zone;
  const modelFor2 = (role) => {
    const variable = `${role.toUpperCase()}_MODEL`;
    const own = vars[variable];
    if (own) return { ...own, variable };
    if (vars.MODEL) return { ...vars.MODEL, variable: "MODEL" };
    throw notSet("MODEL", MODEL_EXPECTED);
  };
  const models = { teller: modelFor2("teller"), planner: modelFor2("planner"), worker: modelFor2("worker") };
  const config = toConfig(vars, models, defaultTimeZone);
  for (const spec of Object.values(models)) checkProvider(spec, config);
  const transcribe2 = config.attachments.transcribeModel;
  if (transcribe2) {
    if (transcribe2.provider === "anthropic") throw new ConfigError("TRANSCRIBE_MODEL", `TRANSCRIBE_MODEL: expected openai:<model> or openai-compatible:<model> (anthropic has no transcription), got "anthropic:${transcribe2.id}"`);
    checkProvider(transcribe2, config);
  }
  if (config.embeddingModel) {
    if (!EMBEDDING_PROVIDERS.includes(config.embeddingModel.provider)) {
      throw new ConfigError("EMBEDDING_MODEL", `EMBEDDING_MODEL: ${config.embeddingModel.provider} has no embedding models; expected ${EMBEDDING_PROVIDERS.join(" or ")}, got ${JSON.stringify(env.EMBEDDING_MODEL)}`);
    }
    checkProvider(config.embeddingModel, config);
  }
  if (vars.TELEGRAM_BOT_TOKEN && vars.TELEGRAM_WEBHOOK_URL && !vars.TELEGRAM_WEBHOOK_SECRET) {
    throw notSet("TELEGRAM_WEBHOOK_SECRET", "expected a secret Telegram sends back with every webhook request, because TELEGRAM_WEBHOOK_URL is set");
  }
  if (vars.SLACK_BOT_TOKEN && !vars.SLACK_APP_TOKEN && !vars.SLACK_SIGNING_SECRET) {
    throw notSet("SLACK_SIGNING_SECRET", "expected the app's signing secret for HTTP mode (or set SLACK_APP_TOKEN for Socket Mode)");
  }
  return config;
}
function searchConfig(vars) {
  const because = `, because SEARCH_PROVIDER is ${vars.SEARCH_PROVIDER}`;
  switch (vars.SEARCH_PROVIDER) {
    case void 0:
      return void 0;
    case "searxng":
      if (!vars.SEARXNG_URL) throw notSet("SEARXNG_URL", `expected the SearXNG instance's URL, e.g. http://localhost:8888${because}`);
      return { provider: "searxng", url: vars.SEARXNG_URL };
    case "brave":
      if (!vars.BRAVE_API_KEY) throw notSet("BRAVE_API_KEY", `expected a Brave Search API key${because}`);
      return { provider: "brave", apiKey: vars.BRAVE_API_KEY, apiUrl: vars.BRAVE_API_URL };
    case "tavily":
      if (!vars.TAVILY_API_KEY) throw notSet("TAVILY_API_KEY", `expected a Tavily API key${because}`);
      return { provider: "tavily", apiKey: vars.TAVILY_API_KEY, apiUrl: vars.TAVILY_API_URL };
  }
}
function checkProvider(spec, config) {
  const { openai, anthropic, openaiCompatible } = config.providers;
  const have = { openai: openai.apiKey, anthropic: anthropic.apiKey, "openai-compatible": openaiCompatible.baseURL };
  if (have[spec.provider] !== void 0) return;
  const need = PROVIDER_NEEDS[spec.provider];
  throw notSet(need.variable, `${need.expected}, because ${spec.variable} uses ${spec.provider}`);
}
function toConfig(vars, models, defaultTimeZone) {
  return {
    dataDir: resolve(vars.DATA_DIR),
    storeUrl: vars.STORE_URL,
    models,
    embeddingModel: vars.EMBEDDING_MODEL && { ...vars.EMBEDDING_MODEL, variable: "EMBEDDING_MODEL" },
    providers: {
      openai: { apiKey: vars.OPENAI_API_KEY, baseURL: vars.OPENAI_BASE_URL },
      anthropic: { apiKey: vars.ANTHROPIC_API_KEY, baseURL: vars.ANTHROPIC_BASE_URL },
      openaiCompatible: { baseURL: vars.OPENAI_COMPATIBLE_BASE_URL, apiKey: vars.OPENAI_COMPATIBLE_API_KEY }
    },
    allowedUsers: vars.ALLOWED_USERS,
    logLevel: vars.LOG_LEVEL,
    logFile: vars.LOG_FILE === void 0 ? void 0 : resolve(vars.LOG_FILE),
    workerConcurrency: vars.WORKER_CONCURRENCY,
    timeouts: { planner: vars.PLANNER_TIMEOUT, worker: vars.WORKER_TIMEOUT },
    maxSteps: { teller: vars.TELLER_MAX_STEPS, planner: vars.PLANNER_MAX_STEPS, worker: vars.WORKER_MAX_STEPS },
    context: { contextTokens: vars.MODEL_CONTEXT_TOKENS, outputTokens: vars.MODEL_OUTPUT_TOKENS },
    contextBudgetTokens: vars.CONTEXT_BUDGET_TOKENS,
    maxRetries: vars.MODEL_MAX_RETRIES,
    maxReplyMessages: vars.MAX_REPLY_MESSAGES,
    streamReplies: vars.STREAM_REPLIES === "on",
    modelTimeoutMs: vars.MODEL_TIMEOUT * 1e3,
    permissionsFile: vars.PERMISSIONS_FILE === void 0 ? void 0 : resolve(vars.PERMISSIONS_FILE),
    telegram: {
      botToken: vars.TELEGRAM_BOT_TOKEN,
      apiRoot: vars.TELEGRAM_API_ROOT,
      webhookUrl: vars.TELEGRAM_WEBHOOK_URL,
      webhookSecret: vars.TELEGRAM_WEBHOOK_SECRET,
      webhookPort: vars.TELEGRAM_WEBHOOK_PORT
    },
    slack: {
      botToken: vars.SLACK_BOT_TOKEN,
      appToken: vars.SLACK_APP_TOKEN,
      signingSecret: vars.SLACK_SIGNING_SECRET,
      port: vars.SLACK_PORT,
      apiUrl: vars.SLACK_API_URL,
      suggestedPrompts: vars.SLACK_SUGGESTED_PROMPTS
    },
    memoryScope: vars.MEMORY_SCOPE,
    defaultTimeZone,
    workspace: { quotaBytes: vars.WORKSPACE_MAX_MB * 1024 * 1024 },
    fetch: { maxBytes: vars.FETCH_MAX_BYTES, allowHosts: vars.FETCH_ALLOW_HOSTS },
    hooks: { token: vars.HOOKS_TOKEN, host: vars.HOOKS_HOST, port: vars.HOOKS_PORT },
    // A call that reports progress may pass MCP_TOOL_TIMEOUT, never MCP_TOOL_MAX_SECONDS (nor the other way round).
    mcp: { configFile: vars.MCP_CONFIG === void 0 ? void 0 : resolve(vars.MCP_CONFIG), toolTimeoutMs: vars.MCP_TOOL_TIMEOUT * 1e3, toolMaxMs: Math.max(vars.MCP_TOOL_MAX_SECONDS, vars.MCP_TOOL_TIMEOUT) * 1e3, elicitationTimeoutMs: vars.MCP_ELICITATION_TIMEOUT * 1e3 },
    search: searchConfig(vars),
    admin: { host: vars.ADMIN_HOST, port: vars.ADMIN_PORT === "off" ? void 0 : vars.ADMIN_PORT, token: vars.ADMIN_TOKEN },
    shutdownGraceMs: vars.SHUTDOWN_GRACE * 1e3,
    cluster: { leaseSeconds: vars.CLUSTER_LEASE_SECONDS },
    attachments: {
      maxBytes: vars.MAX_ATTACHMENT_MB * 1024 * 1024,
      // Many local models behind openai-compatible servers cannot see images.
      vision: vars.VISION === void 0 ? models.teller.provider !== "openai-compatible" : vars.VISION === "on",
      transcribeModel: vars.TRANSCRIBE_MODEL && { ...vars.TRANSCRIBE_MODEL, variable: "TRANSCRIBE_MODEL" }
    },
    quotas: quotasOf(vars)
  };
}
var schema, EMBEDDING_PROVIDERS, PROVIDER_NEEDS;
var init_config = __esm({
  "src/config/config.ts"() {
    "use strict";
    init_cron();
    init_address_policy();
    init_quotas();
    init_fields();
    init_platforms();
    init_settings();
    init_fields();
    init_settings();
    schema = z3.object({
      DATA_DIR: z3.string().default("./data"),
      STORE_URL: storeUrl.optional(),
      MODEL: modelSpec.optional(),
      TELLER_MODEL: modelSpec.optional(),
      PLANNER_MODEL: modelSpec.optional(),
      WORKER_MODEL: modelSpec.optional(),
      EMBEDDING_MODEL: modelSpec.optional(),
      OPENAI_API_KEY: z3.string().optional(),
      OPENAI_BASE_URL: httpUrl().optional(),
      ANTHROPIC_API_KEY: z3.string().optional(),
      ANTHROPIC_BASE_URL: httpUrl().optional(),
      OPENAI_COMPATIBLE_BASE_URL: httpUrl().optional(),
      OPENAI_COMPATIBLE_API_KEY: z3.string().optional(),
      ALLOWED_USERS: allowedUsers.default(() => ({ anyone: false, users: /* @__PURE__ */ new Set(["console:local"]) })),
      LOG_LEVEL: z3.enum(LOG_LEVELS, `expected one of ${LOG_LEVELS.join(", ")}`).default("info"),
      LOG_FILE: z3.string().optional(),
      WORKER_CONCURRENCY: wholeNumber(1, 64).default(4),
      PLANNER_TIMEOUT: wholeNumber(1).default(300),
      WORKER_TIMEOUT: wholeNumber(1).default(900),
      TELLER_MAX_STEPS: wholeNumber(1, 200).default(8),
      PLANNER_MAX_STEPS: wholeNumber(1, 200).default(20),
      WORKER_MAX_STEPS: wholeNumber(1, 200).default(30),
      MAX_REPLY_MESSAGES: wholeNumber(1, 100).default(5),
      MODEL_CONTEXT_TOKENS: wholeNumber(1e3).default(128e3),
      MODEL_OUTPUT_TOKENS: wholeNumber(256).default(32e3),
      CONTEXT_BUDGET_TOKENS: wholeNumber(4e3).default(32e3),
      MODEL_MAX_RETRIES: wholeNumber(0, 10).default(3),
      // Node's fetch gives up on its own after 300 s without headers or body data.
      MODEL_TIMEOUT: wholeNumber(1, 300).default(300),
      PERMISSIONS_FILE: z3.string().optional(),
      TELEGRAM_BOT_TOKEN: telegramToken.optional(),
      TELEGRAM_API_ROOT: httpUrl().optional(),
      TELEGRAM_WEBHOOK_URL: httpUrl().optional(),
      // Telegram's rule for secret_token.
      TELEGRAM_WEBHOOK_SECRET: z3.string().regex(/^[A-Za-z0-9_-]{1,256}$/, "expected 1-256 characters A-Z, a-z, 0-9, _ or -").optional(),
      TELEGRAM_WEBHOOK_PORT: port().default(8443),
      SLACK_BOT_TOKEN: slackBotToken.optional(),
      SLACK_APP_TOKEN: slackAppToken.optional(),
      SLACK_SIGNING_SECRET: z3.string().optional(),
      SLACK_PORT: port().default(3e3),
      SLACK_API_URL: httpUrl().optional(),
      SLACK_SUGGESTED_PROMPTS: z3.string().transform((value) => value.split(";").map((prompt) => prompt.trim()).filter(Boolean)).pipe(z3.array(z3.string().max(150, "expected prompts of at most 150 characters")).min(1, "expected 1 to 4 prompts separated by ;").max(4, "expected 1 to 4 prompts separated by ;")).optional(),
      MEMORY_SCOPE: z3.enum(["user", "shared"], "expected user or shared").default("user"),
      // Unset: the server's zone (TZ), checked in loadConfig.
      DEFAULT_TIMEZONE: z3.string().refine(isTimeZone, 'expected an IANA time zone, e.g. "Europe/Berlin"').optional(),
      WORKSPACE_MAX_MB: wholeNumber(1, 1024 * 1024).default(500),
      // 5 MiB holds any article; the cap keeps a worker from pulling a video or a data dump into memory.
      FETCH_MAX_BYTES: wholeNumber(1024, 1024 ** 3).default(5 * 1024 * 1024),
      FETCH_ALLOW_HOSTS: allowHostsSchema.default(() => ({ hosts: /* @__PURE__ */ new Set(), cidrs: [] })),
      HOOKS_TOKEN: z3.string().min(16, "expected at least 16 characters (it guards an HTTP endpoint)").optional(),
      HOOKS_PORT: port().default(8790),
      MCP_CONFIG: z3.string().optional(),
      MCP_TOOL_TIMEOUT: wholeNumber(1, 3600).default(60),
      MCP_TOOL_MAX_SECONDS: wholeNumber(1, 86400).default(600),
      MCP_ELICITATION_TIMEOUT: wholeNumber(10, 86400).default(300),
      SEARCH_PROVIDER: z3.enum(SEARCH_PROVIDERS, `expected one of ${SEARCH_PROVIDERS.join(", ")}`).optional(),
      SEARXNG_URL: httpUrl().optional(),
      BRAVE_API_KEY: z3.string().optional(),
      BRAVE_API_URL: httpUrl().default("https://api.search.brave.com/res/v1/web/search"),
      TAVILY_API_KEY: z3.string().optional(),
      TAVILY_API_URL: httpUrl().default("https://api.tavily.com/search"),
      // Loopback by default: taking hooks from other machines is the operator's explicit choice.
      HOOKS_HOST: z3.union([z3.hostname(), z3.ipv6()], "expected an address to listen on, e.g. 127.0.0.1, 0.0.0.0 or ::").default("127.0.0.1"),
      ADMIN_HOST: z3.string().default("127.0.0.1"),
      // 0 lets the system pick a free port (tests); "off" disables the admin server.
      ADMIN_PORT: z3.union([z3.literal("off"), wholeNumber(0, 65535)], { error: 'expected a port from 0 to 65535, or "off"' }).default(8791),
      // Signs the owner into the browser console at ADMIN_HOST:ADMIN_PORT; unset, there is no console.
      ADMIN_TOKEN: z3.string().min(16, "expected at least 16 characters (it signs the owner into the console)").optional(),
      SHUTDOWN_GRACE: wholeNumber(0, 3600).default(10),
      CLUSTER_LEASE_SECONDS: wholeNumber(1, 3600).default(15),
      // Telegram's own download limit for bots is 20 MB.
      MAX_ATTACHMENT_MB: wholeNumber(1, 2e3).default(20),
      VISION: z3.enum(["on", "off"], "expected on or off").optional(),
      STREAM_REPLIES: z3.enum(["on", "off"], "expected on or off").default("on"),
      TRANSCRIBE_MODEL: modelSpec.optional(),
      ...QUOTA_VARIABLES
    });
    EMBEDDING_PROVIDERS = ["openai", "openai-compatible"];
    PROVIDER_NEEDS = {
      openai: { variable: "OPENAI_API_KEY", expected: "expected an OpenAI API key" },
      anthropic: { variable: "ANTHROPIC_API_KEY", expected: "expected an Anthropic API key" },
      "openai-compatible": {
        variable: "OPENAI_COMPATIBLE_BASE_URL",
        expected: "expected the server's http(s) URL, e.g. http://localhost:11434/v1"
      }
    };
  }
});

// src/tool/tool.ts
import { z as z5 } from "zod";
function defineTool(def) {
  return def;
}
function toolFamily(id, current, settled) {
  return {
    id,
    description: `The tools ${id}`,
    parameters: z5.object({}),
    members: current,
    settled,
    execute: () => Promise.reject(new Error(`${id} is a family of tools, not a tool: the agent loop offers its members`))
  };
}
var ToolError;
var init_tool = __esm({
  "src/tool/tool.ts"() {
    "use strict";
    ToolError = class extends Error {
      name = "ToolError";
    };
  }
});

// src/core/types.ts
var TERMINAL;
var init_types = __esm({
  "src/core/types.ts"() {
    "use strict";
    TERMINAL = /* @__PURE__ */ new Set(["completed", "failed", "cancelled", "timed_out"]);
  }
});

// src/schedule/timer.ts
function timerAt(at2, fire) {
  let handle;
  const wait = () => {
    const delay = at2.getTime() - Date.now();
    handle = delay > MAX_DELAY_MS ? setTimeout(wait, MAX_DELAY_MS) : setTimeout(fire, Math.max(0, delay));
  };
  wait();
  return () => clearTimeout(handle);
}
function earliest(times) {
  let first;
  for (const at2 of times) if (at2 && (!first || at2 < first)) first = at2;
  return first;
}
var MAX_DELAY_MS;
var init_timer = __esm({
  "src/schedule/timer.ts"() {
    "use strict";
    MAX_DELAY_MS = 2 ** 31 - 1;
  }
});

// src/schedule/condition.ts
import { z as z6 } from "zod";
function evaluateCondition(condition, facts, since) {
  switch (condition.kind) {
    case "task":
      return taskResult(condition.status ?? "completed", facts.taskStatus(condition.taskId));
    case "time":
      return facts.now.getTime() >= Date.parse(condition.at) ? "holds" : "waiting";
    case "event":
      return facts.raisedSince(condition.name, since) ? "holds" : "waiting";
    case "all": {
      const results = condition.of.map((part) => evaluateCondition(part, facts, since));
      if (results.includes("never")) return "never";
      return results.every((result2) => result2 === "holds") ? "holds" : "waiting";
    }
    case "any": {
      const results = condition.of.map((part) => evaluateCondition(part, facts, since));
      if (results.includes("holds")) return "holds";
      return results.every((result2) => result2 === "never") ? "never" : "waiting";
    }
  }
}
function taskIdsOf(condition) {
  if (condition.kind === "task") return [condition.taskId];
  if (condition.kind === "all" || condition.kind === "any") return condition.of.flatMap(taskIdsOf);
  return [];
}
function whyNever(condition, taskStatus) {
  const reasons = [];
  const visit = (part) => {
    if (part.kind === "all" || part.kind === "any") return part.of.forEach(visit);
    if (part.kind !== "task") return;
    const status = taskStatus(part.taskId);
    if (taskResult(part.status ?? "completed", status) !== "never") return;
    reasons.push(status === void 0 ? `task ${part.taskId} does not exist` : `task ${part.taskId} ended ${status}, not ${part.status ?? "completed"}`);
  };
  visit(condition);
  return reasons.join("; ");
}
function taskResult(wanted, status) {
  if (status === void 0) return "never";
  if (!TERMINAL.has(status)) return "waiting";
  switch (wanted) {
    case "completed":
      return status === "completed" ? "holds" : "never";
    case "failed":
      return status === "failed" || status === "timed_out" ? "holds" : "never";
    case "any":
      return "holds";
  }
}
function nextTimeOf(condition, now2) {
  switch (condition.kind) {
    case "time": {
      const at2 = Date.parse(condition.at);
      return at2 > now2.getTime() ? new Date(at2) : void 0;
    }
    case "all":
    case "any":
      return earliest(condition.of.map((part) => nextTimeOf(part, now2)));
    default:
      return void 0;
  }
}
var EVENT_NAME, Condition;
var init_condition = __esm({
  "src/schedule/condition.ts"() {
    "use strict";
    init_types();
    init_timer();
    EVENT_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
    Condition = z6.lazy(
      () => z6.discriminatedUnion("kind", [
        z6.object({ kind: z6.literal("task"), taskId: z6.string().min(1), status: z6.enum(["completed", "failed", "any"]).optional() }),
        z6.object({ kind: z6.literal("time"), at: z6.iso.datetime({ offset: true }) }),
        z6.object({ kind: z6.literal("event"), name: z6.string().regex(EVENT_NAME, "letters, digits, _ . - (at most 64)") }),
        z6.object({ kind: z6.enum(["all", "any"]), of: z6.array(Condition).min(1).max(16) })
      ])
    );
  }
});

// src/schedule/request.ts
import { z as z7 } from "zod";
function runAtProblem(runAt, askedAt) {
  const now2 = askedAt ?? /* @__PURE__ */ new Date();
  const at2 = Date.parse(runAt);
  if (at2 <= now2.getTime()) return askedAt ? `runAt ${runAt} was not in the future when this was asked for (${askedAt.toISOString()})` : `runAt ${runAt} is not in the future (now: ${now2.toISOString()})`;
  const yearAhead = new Date(now2);
  yearAhead.setUTCFullYear(yearAhead.getUTCFullYear() + 1);
  if (at2 > yearAhead.getTime()) return `runAt ${runAt} is more than a year ahead`;
  return void 0;
}
var NO_REPORT, MAX_LATENESS_S, CronExpression, TimeZone, ScheduleRequest;
var init_request = __esm({
  "src/schedule/request.ts"() {
    "use strict";
    init_condition();
    init_cron();
    NO_REPORT = "NO_REPORT";
    MAX_LATENESS_S = 86400;
    CronExpression = z7.string().trim().superRefine((expression, ctx) => {
      const read = parseScheduleCron(expression);
      if ("error" in read) ctx.addIssue({ code: "custom", message: read.error });
    });
    TimeZone = z7.string().refine(isTimeZone, { error: (issue) => `unknown IANA time zone "${String(issue.input)}" (e.g. "Europe/Berlin")` });
    ScheduleRequest = z7.object({
      prompt: z7.string().trim().min(1).describe("What the Worker does at each run, complete and self-contained"),
      type: z7.enum(["recurring", "scheduled", "conditional"]),
      interval: z7.number().int().min(60).optional().describe("recurring: seconds between runs, at least 60"),
      cron: CronExpression.optional().describe('recurring, instead of interval: a 5- or 6-field cron expression read as crontab reads it (L, W, # and @daily-style nicknames allowed), e.g. "0 9 * * 1-5"'),
      timezone: TimeZone.optional().describe(`With cron: the IANA time zone it is read in, e.g. "Europe/Berlin" (default: the user's time zone)`),
      runAt: z7.iso.datetime({ offset: true }).optional().describe("scheduled: when to run, ISO 8601 with offset, in the future and at most a year ahead"),
      condition: Condition.optional().describe("conditional: runs each time this becomes true"),
      cooldown: z7.number().int().min(0).optional().describe("conditional: seconds to wait after a run before reacting again (default 0)"),
      timeout: z7.number().int().positive().max(86400).nullable().optional().describe("Seconds each run may take; null or absent: the Worker default"),
      onMissed: z7.enum(["run-once", "skip"]).optional().describe('A run missed while Steward was down: "run-once" (default) catches up once if late by at most maxLateness, "skip" does not'),
      maxLateness: z7.number().int().min(0).max(MAX_LATENESS_S).optional().describe("Seconds a missed run may be late and still run (default 3600)"),
      target: z7.string().min(1).optional().describe("Conversation id to post the reports to (default: this conversation)"),
      quiet: z7.boolean().optional().describe(`true: a run that finds nothing worth telling answers exactly ${NO_REPORT} and nothing is posted (for checks like "tell me if the site is down")`),
      triggerId: z7.string().min(1).optional().describe("Id (or a unique prefix of at least 4 characters) of an existing schedule of this conversation: this request replaces its definition in place, keeping its history")
    }).superRefine((request, ctx) => {
      const misplaced = (fields, type) => {
        for (const field of fields) {
          if (request[field] !== void 0) ctx.addIssue({ code: "custom", path: [field], message: `${field} is only for type "${type}"` });
        }
      };
      const require2 = (field, message) => ctx.addIssue({ code: "custom", path: [field], message });
      if (request.type !== "recurring") misplaced(["interval", "cron", "timezone"], "recurring");
      if (request.type !== "scheduled") misplaced(["runAt"], "scheduled");
      if (request.type !== "conditional") misplaced(["condition", "cooldown"], "conditional");
      if (request.type === "recurring") {
        if (request.interval === void 0 === (request.cron === void 0)) require2("interval", "recurring needs exactly one of interval (seconds) or cron");
        if (request.timezone !== void 0 && request.cron === void 0) require2("timezone", "timezone is only used with cron");
      }
      if (request.type === "scheduled" && request.runAt === void 0) require2("runAt", "scheduled needs runAt");
      if (request.type === "conditional" && request.condition === void 0) require2("condition", "conditional needs a condition");
    });
  }
});

// src/permission/wildcard.ts
function match(value, pattern) {
  let source = "";
  for (const char of pattern) {
    if (char === "*") source += ".*";
    else if (char === "?") source += ".";
    else source += SYNTAX.test(char) ? `\\${char}` : char;
  }
  if (source.endsWith(" .*")) source = `${source.slice(0, -3)}( .*)?`;
  return new RegExp(`^${source}$`, "su").test(value);
}
var SYNTAX;
var init_wildcard = __esm({
  "src/permission/wildcard.ts"() {
    "use strict";
    SYNTAX = /[\\^$.*+?()[\]{}|]/;
  }
});

// src/permission/permission.ts
import { z as z8 } from "zod";
function merge(...rulesets) {
  return rulesets.flat();
}
function evaluate(permission, pattern, ...rulesets) {
  const rule = merge(...rulesets).findLast((r) => match(permission, r.permission) && match(pattern, r.pattern));
  return rule ?? { permission, pattern: "*", action: "ask" };
}
function disabled(tools, ruleset) {
  const result2 = /* @__PURE__ */ new Set();
  for (const tool2 of tools) {
    const rule = ruleset.findLast((r) => match(tool2, r.permission));
    if (rule?.pattern === "*" && rule.action === "deny") result2.add(tool2);
  }
  return result2;
}
var Action, Rule, Ruleset;
var init_permission = __esm({
  "src/permission/permission.ts"() {
    "use strict";
    init_wildcard();
    Action = z8.enum(["allow", "deny", "ask"]);
    Rule = z8.object({ permission: z8.string().min(1), pattern: z8.string().min(1), action: Action });
    Ruleset = z8.array(Rule);
  }
});

// src/permission/roles.ts
import { z as z9 } from "zod";
function forRole(role, extra, granted = []) {
  return merge(defaults[role], granted, extra?.[role] ?? []);
}
function parseConfig(json) {
  return Config.parse(json);
}
function has(role, right) {
  const rights = RIGHTS[role];
  switch (right) {
    case "delegate":
      return rights.delegatesTo !== void 0;
    case "shape_tasks":
      return rights.shapesTasks;
    case "ask_user":
      return rights.asksUser;
    case "schedule":
      return rights.schedules;
  }
}
function delegateTarget(role) {
  return RIGHTS[role].delegatesTo;
}
function refusal(role, right, detail) {
  return has(role, right) ? void 0 : REFUSALS[right](detail);
}
function withheldTools(role) {
  return Object.keys(TOOL_OF).filter((right) => !has(role, right)).map((right) => TOOL_OF[right]);
}
function mayReportTo(user, targetUser) {
  return user.owner || targetUser === user.id;
}
var allow, denyAll, defaults, Config, RIGHTS, REFUSALS, TOOL_OF;
var init_roles = __esm({
  "src/permission/roles.ts"() {
    "use strict";
    init_permission();
    allow = (permission, pattern = "*") => ({ permission, pattern, action: "allow" });
    denyAll = { permission: "*", pattern: "*", action: "deny" };
    defaults = {
      teller: [denyAll, allow("delegate", "planner"), allow("reply"), allow("send_file"), allow("remember"), allow("forget"), allow("set_timezone"), allow("ask_user"), allow("list_tasks"), allow("cancel_task")],
      planner: [
        denyAll,
        allow("delegate"),
        allow("get_recent_history"),
        allow("get_history_by_time"),
        allow("search_memory"),
        allow("schedule"),
        allow("list_tasks"),
        allow("cancel_task"),
        allow("web_search")
      ],
      worker: [denyAll, allow("fetch_url"), allow("read_file"), allow("write_file"), allow("list_files"), allow("web_search"), allow("send_file"), allow("read_resource")]
    };
    Config = z9.strictObject({ teller: Ruleset.optional(), planner: Ruleset.optional(), worker: Ruleset.optional() });
    RIGHTS = {
      teller: { delegatesTo: "planner", shapesTasks: false, asksUser: true, schedules: false },
      planner: { delegatesTo: "worker", shapesTasks: true, asksUser: false, schedules: true },
      worker: { shapesTasks: false, asksUser: false, schedules: false }
    };
    REFUSALS = {
      delegate: () => "Workers cannot delegate: do the work yourself, or report what is missing.",
      shape_tasks: (fields = "type, condition, priority or worker") => `Only the Planner may set ${fields}; delegate with prompt (and timeout) only.`,
      ask_user: () => "Only the Teller asks the user.",
      schedule: () => "Only the Planner creates schedules; delegate the request to the Planner."
    };
    TOOL_OF = { delegate: "delegate", ask_user: "ask_user", schedule: "schedule" };
  }
});

// src/store/backend.ts
var MAX_INDEXES;
var init_backend = __esm({
  "src/store/backend.ts"() {
    "use strict";
    MAX_INDEXES = 3;
  }
});

// src/store/rows.ts
function statementCache(build) {
  const built = /* @__PURE__ */ new Map();
  return (rows) => {
    let sql = built.get(rows);
    if (!sql) built.set(rows, sql = build(rows));
    return sql;
  };
}
function gather(batch, ops) {
  for (const op of ops) {
    const key = `${op.collection}\0${op.id}`;
    batch.delete(key);
    batch.set(key, op);
  }
}
function statementsOf(ops, dialect) {
  const text = dialect.text ?? ((value) => value);
  const at2 = dialect.at ?? ((value) => value);
  const puts = [];
  const deletes = [];
  for (const op of ops) {
    if ("delete" in op) {
      deletes.push([op.collection, text(op.id)]);
      continue;
    }
    const row = [op.collection, text(op.id), JSON.stringify(op.value), ...Array(2 * MAX_INDEXES).fill(null)];
    for (const [name, entry] of Object.entries(op.indexes)) {
      if (!entry) continue;
      const n = dialect.slotOf(op.collection, name);
      row[1 + 2 * n] = text(entry.group);
      row[2 + 2 * n] = at2(entry.at);
    }
    puts.push(row);
  }
  const statements = [];
  const perPut = Math.floor(dialect.maxParams / ROW_WIDTH);
  for (let i = 0; i < puts.length; i += perPut) {
    const part = puts.slice(i, i + perPut);
    statements.push([dialect.upsertSql(part.length), part.flat()]);
  }
  const perDelete = Math.floor(dialect.maxParams / 2);
  for (let i = 0; i < deletes.length; i += perDelete) {
    const part = deletes.slice(i, i + perDelete);
    statements.push([dialect.deleteSql(part.length), part.flat()]);
  }
  return statements;
}
var SLOTS, ROW_WIDTH, COLUMNS, UPDATES, IndexSlots;
var init_rows = __esm({
  "src/store/rows.ts"() {
    "use strict";
    init_backend();
    SLOTS = Array.from({ length: MAX_INDEXES }, (_, i) => i + 1);
    ROW_WIDTH = 3 + 2 * MAX_INDEXES;
    COLUMNS = ["collection", "id", "value", ...SLOTS.flatMap((n) => [`g${n}`, `a${n}`])];
    UPDATES = COLUMNS.slice(2).map((column) => `${column} = excluded.${column}`).join(", ");
    IndexSlots = class {
      constructor(schema2) {
        this.schema = schema2;
        for (const collection of schema2) {
          if (collection.indexes.length > MAX_INDEXES) throw new Error(`collection ${collection.name}: at most ${MAX_INDEXES} indexes`);
          this.slots.set(collection.name, new Map(collection.indexes.map((name, i) => [name, i + 1])));
        }
      }
      schema;
      slots = /* @__PURE__ */ new Map();
      of(collection, index) {
        const n = this.slots.get(collection)?.get(index);
        if (n === void 0) throw new Error(`collection ${collection} has no index ${index}`);
        return n;
      }
      /** A collection's index names in slot order (none for a collection not in the schema). */
      indexesOf(collection) {
        return [...this.slots.get(collection)?.keys() ?? []];
      }
    };
  }
});

// src/store/sqlite.ts
import { mkdirSync } from "node:fs";
import { join as join4 } from "node:path";
import KeyvSqlite from "@keyv/sqlite";
var MAX_PARAMS_PER_STATEMENT, LEGACY_NAMESPACE, placeholders, upsertSql, deleteSql, SqliteBackend;
var init_sqlite = __esm({
  "src/store/sqlite.ts"() {
    "use strict";
    init_backend();
    init_rows();
    MAX_PARAMS_PER_STATEMENT = 999;
    LEGACY_NAMESPACE = "steward:";
    placeholders = (count, width) => Array.from({ length: count }, () => `(${Array(width).fill("?").join(", ")})`).join(", ");
    upsertSql = statementCache((rows) => `INSERT INTO records (${COLUMNS.join(", ")}) VALUES ${placeholders(rows, ROW_WIDTH)} ON CONFLICT (collection, id) DO UPDATE SET ${UPDATES}`);
    deleteSql = statementCache((rows) => `DELETE FROM records WHERE (collection, id) IN (VALUES ${placeholders(rows, 2)})`);
    SqliteBackend = class _SqliteBackend {
      constructor(adapter, slots) {
        this.adapter = adapter;
        this.slots = slots;
      }
      adapter;
      slots;
      chain = Promise.resolve();
      batch;
      /** Opens `dataDir/file`; another file than steward.sqlite is a backup being written. */
      static async open(dataDir, schema2, file = "steward.sqlite") {
        mkdirSync(dataDir, { recursive: true });
        const adapter = new KeyvSqlite({ uri: `sqlite://${join4(dataDir, file)}`, busyTimeout: 5e3 });
        await adapter.query("PRAGMA journal_mode=WAL");
        await adapter.query("PRAGMA synchronous=NORMAL");
        const columns = SLOTS.map((n) => `g${n} TEXT, a${n} INTEGER`).join(", ");
        await adapter.query(`CREATE TABLE IF NOT EXISTS records (collection TEXT NOT NULL, id TEXT NOT NULL, value TEXT NOT NULL, ${columns}, PRIMARY KEY (collection, id))`);
        for (const n of SLOTS) await adapter.query(`CREATE INDEX IF NOT EXISTS records_index${n} ON records (collection, g${n}, a${n}, id) WHERE g${n} IS NOT NULL`);
        return new _SqliteBackend(adapter, new IndexSlots(schema2));
      }
      write(ops) {
        if (!this.batch) {
          const pending = /* @__PURE__ */ new Map();
          const done = this.enqueue(() => this.flush(pending));
          this.batch = { ops: pending, done };
        }
        gather(this.batch.ops, ops);
        return this.batch.done;
      }
      get(collection, id) {
        return this.enqueue(async () => {
          const rows = await this.adapter.query("SELECT value FROM records WHERE collection = ? AND id = ?", collection, id);
          return rows[0] === void 0 ? void 0 : JSON.parse(rows[0].value);
        });
      }
      list(collection, query) {
        const n = this.slots.of(collection, query.index);
        const order = query.desc ? "DESC" : "ASC";
        const limit = query.limit === void 0 ? -1 : Math.max(0, Math.floor(query.limit));
        const offset = Math.max(0, Math.floor(query.offset ?? 0));
        return this.enqueue(async () => {
          const rows = await this.adapter.query(
            `SELECT value FROM records WHERE collection = ? AND g${n} = ? AND a${n} >= ? AND a${n} <= ? ORDER BY a${n} ${order}, id ${order} LIMIT ? OFFSET ?`,
            collection,
            query.group,
            query.from ?? Number.MIN_SAFE_INTEGER,
            query.to ?? Number.MAX_SAFE_INTEGER,
            limit,
            offset
          );
          return rows.map((row) => JSON.parse(row.value));
        });
      }
      page(collection, options) {
        return this.enqueue(async () => {
          const rows = await this.adapter.query(
            "SELECT id, value FROM records WHERE collection = ? AND id > ? ORDER BY id LIMIT ?",
            collection,
            options.after ?? "",
            Math.max(0, Math.floor(options.limit))
          );
          return rows.map((row) => ({ id: row.id, value: JSON.parse(row.value) }));
        });
      }
      /** Rows of the keyv layout before schema versions (`steward:<prefix>/<rest>` → `{ value }`),
       *  a page at a time by rowid; for migration 1 only. */
      legacyPage(afterRowid, limit) {
        return this.enqueue(async () => {
          const rows = await this.adapter.query(
            "SELECT rowid, key, value FROM keyv WHERE rowid > ? AND key LIKE ? ORDER BY rowid LIMIT ?",
            afterRowid,
            `${LEGACY_NAMESPACE}%`,
            limit
          );
          return rows.map((row) => ({ rowid: row.rowid, key: row.key.slice(LEGACY_NAMESPACE.length), value: JSON.parse(row.value).value }));
        });
      }
      /** Empties the keyv table once migration 1 has moved its rows (@keyv/sqlite recreates it). */
      clearLegacy() {
        return this.enqueue(async () => {
          await this.adapter.query("DELETE FROM keyv WHERE key LIKE ?", `${LEGACY_NAMESPACE}%`);
        });
      }
      backup(file) {
        return this.enqueue(async () => {
          await this.adapter.query("VACUUM INTO ?", file);
        });
      }
      async close() {
        await this.enqueue(() => this.adapter.disconnect());
      }
      enqueue(op) {
        const next = this.chain.then(op);
        this.chain = next.catch(() => {
        });
        return next;
      }
      async flush(pending) {
        if (this.batch?.ops === pending) this.batch = void 0;
        const statements = statementsOf(pending.values(), { slotOf: (collection, index) => this.slots.of(collection, index), upsertSql, deleteSql, maxParams: MAX_PARAMS_PER_STATEMENT });
        const grouped = statements.length > 1;
        if (grouped) await this.adapter.query("BEGIN IMMEDIATE");
        try {
          for (const [sql, params] of statements) await this.adapter.query(sql, ...params);
          if (grouped) await this.adapter.query("COMMIT");
        } catch (error) {
          if (grouped) await this.adapter.query("ROLLBACK").catch(() => {
          });
          throw error;
        }
      }
    };
  }
});

// src/store/postgres.ts
var postgres_exports = {};
__export(postgres_exports, {
  PostgresBackend: () => PostgresBackend,
  postgresVersion: () => postgresVersion
});
import { rmSync, writeFileSync } from "node:fs";
import { basename as basename2, dirname } from "node:path";
import pg2 from "pg";
function placeholders2(count, width) {
  const rows = [];
  for (let r = 0; r < count; r++) rows.push(`(${Array.from({ length: width }, (_, c) => `$${r * width + c + 1}`).join(", ")})`);
  return rows.join(", ");
}
async function postgresVersion(url) {
  const client = new pg2.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  try {
    await client.connect();
    const { rows } = await client.query("SELECT current_setting('server_version') AS version");
    return rows[0].version;
  } catch (error) {
    throw withUrl(error, url);
  } finally {
    await client.end().catch(() => {
    });
  }
}
function withUrl(error, url) {
  const message = error instanceof Error && error.message || error.code || String(error);
  return new Error(`Postgres store at ${redactUrl(url)}: ${message}`, { cause: error });
}
var MAX_PARAMS_PER_STATEMENT2, CONNECT_TIMEOUT_MS, BACKUP_PAGE, SCHEMA_LOCK, upsertSql2, deleteSql2, CREATE_TABLE, CREATE_INDEXES, escaped, unescaped, PostgresBackend;
var init_postgres = __esm({
  "src/store/postgres.ts"() {
    "use strict";
    init_fields();
    init_backend();
    init_rows();
    init_sqlite();
    MAX_PARAMS_PER_STATEMENT2 = 9e3;
    CONNECT_TIMEOUT_MS = 1e4;
    BACKUP_PAGE = 1e3;
    SCHEMA_LOCK = 0x73746577617264n;
    upsertSql2 = statementCache((rows) => `INSERT INTO records (${COLUMNS.join(", ")}) VALUES ${placeholders2(rows, ROW_WIDTH)} ON CONFLICT (collection, id) DO UPDATE SET ${UPDATES}`);
    deleteSql2 = statementCache((rows) => `DELETE FROM records WHERE (collection, id) IN (${placeholders2(rows, 2)})`);
    CREATE_TABLE = `CREATE TABLE IF NOT EXISTS records (collection TEXT COLLATE "C" NOT NULL, id TEXT COLLATE "C" NOT NULL, value TEXT NOT NULL, ${SLOTS.map((n) => `g${n} TEXT COLLATE "C", a${n} DOUBLE PRECISION`).join(", ")}, PRIMARY KEY (collection, id))`;
    CREATE_INDEXES = SLOTS.map((n) => `CREATE INDEX IF NOT EXISTS records_index${n} ON records (collection, g${n}, a${n}, id) WHERE g${n} IS NOT NULL`);
    escaped = (text) => text.replace(/[\u0000\u0001]/g, (ch) => ch === "\0" ? "" : "");
    unescaped = (text) => text.replace(/\u0001[\u0001\u0002]/g, (pair) => pair === "" ? "\0" : "");
    PostgresBackend = class _PostgresBackend {
      constructor(pool2, slots) {
        this.pool = pool2;
        this.slots = slots;
      }
      pool;
      slots;
      writing = Promise.resolve();
      batch;
      /** Connects, lays out the table and runs `setUp` (the migrations) under one advisory lock, so
       *  processes starting at once against one database create and migrate the schema once. */
      static async open(url, schema2, setUp, { applicationName } = {}) {
        const slots = new IndexSlots(schema2);
        const pool2 = new pg2.Pool({ connectionString: url, max: 10, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, application_name: applicationName });
        pool2.on("error", () => {
        });
        const backend = new _PostgresBackend(pool2, slots);
        try {
          const client = await pool2.connect().catch((error) => {
            throw withUrl(error, url);
          });
          try {
            await client.query("SELECT pg_advisory_lock($1)", [SCHEMA_LOCK.toString()]);
            try {
              await client.query(CREATE_TABLE);
              for (const sql of CREATE_INDEXES) await client.query(sql);
              await setUp?.(backend);
            } finally {
              await client.query("SELECT pg_advisory_unlock($1)", [SCHEMA_LOCK.toString()]);
            }
          } finally {
            client.release();
          }
        } catch (error) {
          await pool2.end().catch(() => {
          });
          throw error;
        }
        return backend;
      }
      write(ops) {
        if (!this.batch) {
          const pending = /* @__PURE__ */ new Map();
          const done = this.writing.then(() => this.flush(pending));
          this.writing = done.catch(() => {
          });
          this.batch = { ops: pending, done };
        }
        gather(this.batch.ops, ops);
        return this.batch.done;
      }
      async get(collection, id) {
        await this.writing;
        const { rows } = await this.pool.query("SELECT value FROM records WHERE collection = $1 AND id = $2", [collection, escaped(id)]);
        return rows[0] === void 0 ? void 0 : JSON.parse(rows[0].value);
      }
      async list(collection, query) {
        const n = this.slots.of(collection, query.index);
        const order = query.desc ? "DESC" : "ASC";
        const limit = query.limit === void 0 ? null : Math.max(0, Math.floor(query.limit));
        const offset = Math.max(0, Math.floor(query.offset ?? 0));
        await this.writing;
        const { rows } = await this.pool.query(
          `SELECT value FROM records WHERE collection = $1 AND g${n} = $2 AND a${n} >= $3 AND a${n} <= $4 ORDER BY a${n} ${order}, id ${order} LIMIT $5 OFFSET $6`,
          [collection, escaped(query.group), query.from ?? Number.MIN_SAFE_INTEGER, query.to ?? Number.MAX_SAFE_INTEGER, limit, offset]
        );
        return rows.map((row) => JSON.parse(row.value));
      }
      async page(collection, options) {
        await this.writing;
        const { rows } = await this.pool.query("SELECT id, value FROM records WHERE collection = $1 AND id > $2 ORDER BY id LIMIT $3", [
          collection,
          escaped(options.after ?? ""),
          Math.max(0, Math.floor(options.limit))
        ]);
        return rows.map((row) => ({ id: unescaped(row.id), value: JSON.parse(row.value) }));
      }
      /** Reads one REPEATABLE READ snapshot (writers go on) into a new SQLite store file, so a backup
       *  is the same kind of file for both backends and opens as a DATA_DIR store. */
      async backup(file) {
        writeFileSync(file, "", { flag: "wx" });
        let client;
        let copy2;
        try {
          client = await this.pool.connect();
          await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
          copy2 = await SqliteBackend.open(dirname(file), this.slots.schema, basename2(file));
          for (let after = ["", ""]; ; ) {
            const { rows } = await client.query(`SELECT ${COLUMNS.join(", ")} FROM records WHERE (collection, id) > ($1, $2) ORDER BY collection, id LIMIT $3`, [...after, BACKUP_PAGE]);
            if (rows.length === 0) break;
            await copy2.write(rows.map((row) => this.opOf(row)));
            after = [rows.at(-1).collection, rows.at(-1).id];
          }
          await client.query("COMMIT");
          await copy2.close();
        } catch (error) {
          await client?.query("ROLLBACK").catch(() => {
          });
          await copy2?.close().catch(() => {
          });
          for (const suffix of ["", "-wal", "-shm"]) rmSync(`${file}${suffix}`, { force: true });
          throw error;
        } finally {
          client?.release();
        }
      }
      async close() {
        await this.writing;
        await this.pool.end();
      }
      /** A stored row as the write that would store it again (a backup's copy). */
      opOf(row) {
        const names2 = this.slots.indexesOf(row.collection);
        const indexes = {};
        names2.forEach((name, i) => {
          const group = row[`g${i + 1}`];
          if (typeof group === "string") indexes[name] = { group: unescaped(group), at: row[`a${i + 1}`] };
        });
        return { collection: row.collection, id: unescaped(row.id), value: JSON.parse(row.value), indexes };
      }
      async flush(pending) {
        if (this.batch?.ops === pending) this.batch = void 0;
        const statements = statementsOf(pending.values(), {
          slotOf: (collection, index) => this.slots.of(collection, index),
          upsertSql: upsertSql2,
          deleteSql: deleteSql2,
          maxParams: MAX_PARAMS_PER_STATEMENT2,
          text: escaped,
          // SQLite stores NaN (Date.parse of a bad date) as NULL, which no range matches; so here.
          at: (at2) => Number.isFinite(at2) ? at2 : null
        });
        if (statements.length === 0) return;
        if (statements.length === 1) {
          await this.pool.query(statements[0][0], statements[0][1]);
          return;
        }
        const client = await this.pool.connect();
        try {
          await client.query("BEGIN");
          for (const [sql, params] of statements) await client.query(sql, params);
          await client.query("COMMIT");
        } catch (error) {
          await client.query("ROLLBACK").catch(() => {
          });
          throw error;
        } finally {
          client.release();
        }
      }
    };
  }
});

// src/memory/slug.ts
import { createHash as createHash3 } from "node:crypto";
function folderName(user) {
  if (user === "") throw new Error("memory: the user id is empty");
  const encoded = Array.from(user, (c) => c === ":" ? "-" : /^[A-Za-z0-9_]$/.test(c) ? c : percentEncode(c)).join("");
  if (encoded.length <= MAX_FOLDER_NAME) return encoded;
  return `${encoded.slice(0, 80)}~${createHash3("sha256").update(user).digest("hex").slice(0, 32)}`;
}
function percentEncode(char) {
  return Array.from(Buffer.from(char, "utf8"), (byte) => `%${byte.toString(16).toUpperCase().padStart(2, "0")}`).join("");
}
var MAX_FOLDER_NAME;
var init_slug = __esm({
  "src/memory/slug.ts"() {
    "use strict";
    MAX_FOLDER_NAME = 120;
  }
});

// src/tool/workspace.ts
import { lstatSync, realpathSync } from "node:fs";
import { lstat, mkdir as mkdir2, readdir } from "node:fs/promises";
import path from "node:path";
function resolveInWorkspace(workspaceDir, relPath) {
  if (relPath.trim() === "") throw new ToolError("path is empty; give a path relative to the workspace, e.g. notes/todo.md");
  if (relPath.includes("\0")) throw new ToolError("path contains a NUL byte");
  if (path.isAbsolute(relPath)) {
    throw new ToolError("absolute paths are not allowed; give a path relative to the workspace");
  }
  const root = path.resolve(workspaceDir);
  const target = path.resolve(root, relPath);
  if (!isInside(root, target)) throw new ToolError(`${relPath} is outside the workspace`);
  const existing = nearestExisting(root, target);
  if (existing !== void 0 && !isInside(realpath(root, relPath), realpath(existing, relPath))) {
    throw new ToolError(`${relPath} leads outside the workspace through a symlink`);
  }
  return target;
}
function userWorkspace(ctx) {
  return userWorkspaceDir(ctx.workspaceDir, ctx.user);
}
function userWorkspaceDir(workspaceDir, user) {
  return path.join(workspaceDir, folderName(user));
}
async function workspacePath(ctx, relPath) {
  try {
    await mkdir2(userWorkspace(ctx), { recursive: true });
    return resolveInWorkspace(userWorkspace(ctx), relPath);
  } catch (err) {
    throw fsError(err, relPath);
  }
}
async function workspaceUsage(root) {
  let total = 0;
  const folders = [root];
  for (let folder = folders.pop(); folder !== void 0; folder = folders.pop()) {
    for (const entry of await readdir(folder, { withFileTypes: true })) {
      const entryPath = path.join(folder, entry.name);
      if (entry.isDirectory()) folders.push(entryPath);
      else total += (await lstat(entryPath)).size;
    }
  }
  return total;
}
function workspaceRelative(workspaceDir, absPath) {
  return path.relative(path.resolve(workspaceDir), absPath).split(path.sep).join("/") || ".";
}
function pathPattern(relPath) {
  return path.posix.normalize(relPath.replaceAll("\\", "/"));
}
function fsError(err, relPath) {
  if (err instanceof ToolError) return err;
  const code = err.code;
  switch (code) {
    case "ENOENT":
      return new ToolError(`no such file: ${relPath}`);
    case "ENOTDIR":
    case "EEXIST":
      return new ToolError(`${relPath}: part of the path is a file, not a folder`);
    case "EISDIR":
      return new ToolError(`${relPath} is a folder, not a file`);
    case "EACCES":
    case "EPERM":
      return new ToolError(`permission denied: ${relPath}`);
    case "ELOOP":
      return new ToolError(`${relPath} goes through a symlink loop`);
    case "ENOSPC":
    case "EDQUOT":
      return new ToolError(`no space left to write ${relPath}`);
    case "ENAMETOOLONG":
      return new ToolError(`${relPath}: the path is too long`);
    default:
      return new ToolError(typeof code === "string" ? `${relPath}: the file system refused (${code})` : `${relPath}: the file operation failed`);
  }
}
function isInside(root, candidate) {
  const rel = path.relative(root, candidate);
  return rel === "" || rel !== ".." && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel);
}
function nearestExisting(root, target) {
  for (let candidate = target; ; candidate = path.dirname(candidate)) {
    if (exists(candidate)) return candidate;
    if (candidate === root) return void 0;
  }
}
function exists(file) {
  try {
    lstatSync(file);
    return true;
  } catch (err) {
    const code = err.code;
    if (code === "ENOENT" || code === "ENOTDIR") return false;
    throw err;
  }
}
function realpath(file, relPath) {
  try {
    return realpathSync(file);
  } catch (err) {
    const code = err.code;
    if (code === "ENOENT" || code === "ELOOP") throw new ToolError(`${relPath} goes through a broken symlink`);
    throw err;
  }
}
var MAX_FILE_BYTES;
var init_workspace = __esm({
  "src/tool/workspace.ts"() {
    "use strict";
    init_slug();
    init_tool();
    MAX_FILE_BYTES = 5 * 1024 * 1024;
  }
});

// src/attachments/media-types.ts
function mediaTypeOf(name) {
  const extension = /\.([A-Za-z0-9]+)$/.exec(name)?.[1]?.toLowerCase();
  return extension && BY_EXTENSION[extension] || OCTET_STREAM;
}
function extensionOf(mediaType) {
  const base = mediaType?.split(";")[0]?.trim().toLowerCase();
  return Object.entries(BY_EXTENSION).find(([, type]) => type === base)?.[0] ?? "bin";
}
function sizeText(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
var BY_EXTENSION, OCTET_STREAM, isModelImage;
var init_media_types = __esm({
  "src/attachments/media-types.ts"() {
    "use strict";
    BY_EXTENSION = {
      jpg: "image/jpeg",
      jpeg: "image/jpeg",
      png: "image/png",
      gif: "image/gif",
      webp: "image/webp",
      pdf: "application/pdf",
      txt: "text/plain",
      md: "text/markdown",
      csv: "text/csv",
      json: "application/json",
      html: "text/html",
      zip: "application/zip",
      docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
      xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
      pptx: "application/vnd.openxmlformats-officedocument.presentationml.presentation",
      ogg: "audio/ogg",
      oga: "audio/ogg",
      mp3: "audio/mpeg",
      m4a: "audio/mp4",
      wav: "audio/wav",
      webm: "audio/webm",
      mp4: "video/mp4",
      mov: "video/quicktime"
    };
    OCTET_STREAM = "application/octet-stream";
    isModelImage = (mediaType) => ["image/jpeg", "image/png", "image/gif", "image/webp"].includes(mediaType);
  }
});

// src/trust/envelope.ts
import { createHash as createHash4, randomBytes as randomBytes4 } from "node:crypto";
function defused(text) {
  return text.replace(STRUCTURE, "\u2039$1$2$3");
}
function untrusted(source, content, { stable = false } = {}) {
  const boundary = stable ? createHash4("sha256").update(content).digest("hex").slice(0, 16) : randomBytes4(8).toString("hex");
  const from = defused(source).replace(/["\n]/g, "'");
  return `${OPEN} source="${from}" boundary="${boundary}">
${defused(content)}
${CLOSE} boundary="${boundary}">`;
}
function holdsUntrusted(text) {
  return text.includes(`${OPEN} source=`);
}
function unwrapped(text) {
  return text.replace(/<untrusted-content source="[^"]*" boundary="[0-9a-f]+">\n?/g, "").replace(/\n?<\/untrusted-content boundary="[0-9a-f]+">/g, "");
}
var OPEN, CLOSE, STRUCTURE;
var init_envelope = __esm({
  "src/trust/envelope.ts"() {
    "use strict";
    OPEN = "<untrusted-content";
    CLOSE = "</untrusted-content";
    STRUCTURE = /<(\/?)(\s*)(untrusted-content|task-results|task_metadata|task|system-reminder|memory|env)\b/gi;
  }
});

// src/trust/taint.ts
function tainted(records) {
  for (let i = records.length - 1; i >= 0; i--) {
    const record = records[i];
    let reads = readsUntrusted.get(record);
    if (reads === void 0) {
      reads = isRead(record.message) && holdsUntrusted(typeof record.message.content === "string" ? record.message.content : JSON.stringify(record.message.content));
      readsUntrusted.set(record, reads);
    }
    if (reads) return true;
    if (record.eventId !== void 0 && record.message.role === "user") return false;
  }
  return false;
}
function taintedPrompt(prompt) {
  return `${prompt}

${untrusted("the run that wrote this task", "That run had read outside content before writing this task.")}`;
}
async function taintedRule(def, args, pattern, ctx, rules, records) {
  const guard = def.guardedWhenTainted;
  if (!guard || !tainted(records)) return void 0;
  if (guard !== true && !await guard(args, ctx)) return void 0;
  return evaluate(`${TAINTED}${def.id}`, pattern, rules.filter((rule) => rule.permission.startsWith(TAINTED)));
}
var TAINTED, readsUntrusted, isRead;
var init_taint = __esm({
  "src/trust/taint.ts"() {
    "use strict";
    init_permission();
    init_envelope();
    TAINTED = "tainted:";
    readsUntrusted = /* @__PURE__ */ new WeakMap();
    isRead = (message) => message.role === "tool" || message.role === "user";
  }
});

// src/memory/language.ts
import { createRequire } from "node:module";
import { stemmer as germanStemmer } from "@orama/stemmers/german";
import { stopwords as germanStopWords } from "@orama/stopwords/german";
import porter2 from "wink-nlp-utils/src/string-stem.js";
function fold(word) {
  return /[^\x00-\x7f]/.test(word) && LATIN.test(word) ? word.normalize("NFD").replace(new RegExp("\\p{M}+", "gu"), "") : word;
}
function english(word) {
  const folded = fold(word);
  if (!STEMMABLE.test(folded)) return [folded];
  const stem = porter2(folded);
  const verb = IRREGULAR.get(folded);
  return verb && porter2(verb) !== stem ? [stem, porter2(verb)] : [stem];
}
function german(word) {
  const plain3 = fold(word).replace(/ß/g, "ss");
  const stem = germanStemmer(plain3);
  const participle = SEPARABLE.exec(plain3);
  const base = participle ? `${participle[1] ?? ""}${participle[2]}` : plain3.length >= 5 && plain3.endsWith("t") ? plain3.slice(0, -1) : void 0;
  const verb = base === void 0 ? void 0 : germanStemmer(base);
  return verb && verb !== stem && verb.length >= 3 ? [stem, verb] : [stem];
}
function detectLanguage(text) {
  const head = text.length > DETECT_CHARS ? text.slice(0, DETECT_CHARS) : text;
  if (/^[\x00-\x7f]*$/.test(head) && !head.toLowerCase().match(/[a-z']+/g)?.some((word) => ALL_STOP_WORDS.has(word))) return DEFAULT_LANGUAGE;
  const code = detector().detect(head);
  return code in LANGUAGES ? code : DEFAULT_LANGUAGE;
}
var LATIN, tinyld, detector, STEMMABLE, englishStopWords, IRREGULAR, SEPARABLE, GERMAN_STOP_WORDS, LANGUAGES, DEFAULT_LANGUAGE, LANGUAGE_CODES, DETECT_CHARS, ALL_STOP_WORDS;
var init_language = __esm({
  "src/memory/language.ts"() {
    "use strict";
    LATIN = /^[\p{sc=Latin}\p{M}\p{N}']+$/u;
    detector = () => tinyld ??= createRequire(import.meta.url)("tinyld");
    STEMMABLE = /^[a-z][a-z']*$/;
    englishStopWords = /* @__PURE__ */ new Set([...createRequire(import.meta.url)("wink-nlp-utils/src/dictionaries/stop_words.json"), "now", "currently", "current", "nowadays"]);
    IRREGULAR = new Map(
      "paid:pay bought:buy brought:bring ran:run met:meet went:go gone:go sold:sell told:tell thought:think taught:teach caught:catch sent:send spent:spend built:build lent:lend made:make took:take taken:take gave:give given:give wrote:write written:write drove:drive driven:drive ate:eat eaten:eat began:begin begun:begin broke:break broken:break chose:choose chosen:choose forgot:forget forgotten:forget got:get gotten:get knew:know known:know rode:ride swam:swim swum:swim sang:sing sung:sing spoke:speak spoken:speak stole:steal stolen:steal flew:fly flown:fly grew:grow grown:grow threw:throw thrown:throw wore:wear worn:wear won:win kept:keep slept:sleep held:hold heard:hear did:do done:do had:have".split(" ").map((pair) => pair.split(":"))
    );
    SEPARABLE = /^(ab|an|auf|aus|bei|ein|fest|her|hin|los|mit|nach|vor|weg|zu|zuruck|zusammen)?ge(.{3,}?)(e?t|en)$/;
    GERMAN_STOP_WORDS = /* @__PURE__ */ new Set([...germanStopWords, "beim", "ans", "aufs", "wann", "wer", "warum", "wieso", "weshalb", "unsere", "unserer", "unseren", "bitte", "schon", "mal", "jetzt", "aktuell", "derzeit", "zurzeit"]);
    LANGUAGES = {
      en: { stopWords: englishStopWords, stem: english, compounds: false },
      de: { stopWords: GERMAN_STOP_WORDS, stem: german, compounds: true }
    };
    DEFAULT_LANGUAGE = "en";
    LANGUAGE_CODES = Object.keys(LANGUAGES);
    DETECT_CHARS = 200;
    ALL_STOP_WORDS = new Set(Object.values(LANGUAGES).flatMap((language) => [...language.stopWords]));
  }
});

// src/memory/text.ts
function wordTerms(word, language) {
  const cache2 = memo[language];
  let terms = cache2.get(word);
  if (terms === void 0) {
    if (cache2.size >= MAX_MEMO) cache2.clear();
    const normal = word.normalize("NFKC").replace(/’/g, "'");
    const entry = LANGUAGES[language];
    terms = entry.stopWords.has(normal) ? NONE : /^[\p{L}\p{M}']/u.test(normal) ? entry.stem(normal) : [normal];
    cache2.set(word, terms);
  }
  return terms;
}
function scanCjk(run, offset, emit) {
  const chars = Array.from(run);
  let at2 = offset;
  for (let i = 0; i + 1 < chars.length; i++) {
    const bigram = chars[i] + chars[i + 1];
    emit(bigram.normalize("NFKC"), at2, at2 + bigram.length);
    at2 += chars[i].length;
  }
  for (const segment of segmenter.segment(run)) {
    const length = Array.from(segment.segment).length;
    if (!segment.isWordLike || length === 2 || CJK_STOP_WORDS.has(segment.segment)) continue;
    emit(segment.segment.normalize("NFKC"), offset + segment.index, offset + segment.index + segment.segment.length);
  }
}
function queryWords(query) {
  const detected = detectLanguage(query);
  const order = [detected, ...LANGUAGE_CODES.filter((code) => code !== detected)];
  const words = [];
  const cjk = [];
  for (const word of query.matchAll(WORD)) {
    for (const run of word[0].matchAll(RUN)) {
      if (CJK_START.test(run[0])) {
        scanCjk(run[0], 0, (term) => cjk.push(term));
        continue;
      }
      const lower = run[0].toLowerCase();
      if (wordTerms(lower, detected).length === 0) continue;
      const forms = order.map((language) => ({ language, terms: wordTerms(lower, language) })).filter((form) => form.terms.length > 0);
      words.push({ text: lower.normalize("NFKC"), forms });
    }
  }
  for (const term of new Set(cjk)) words.push({ text: term, forms: [{ terms: [term] }] });
  return words;
}
function countTokens(text) {
  let count = 0;
  for (const _ of text.matchAll(APPROX_TOKEN)) count++;
  return count;
}
function tokenBoundary(text, max) {
  let count = 0;
  for (const match2 of text.matchAll(APPROX_TOKEN)) if (count++ === max) return match2.index;
  return void 0;
}
var CJK_CLASS, WORD, RUN, CJK_START, CJK_STOP_WORDS, segmenter, memo, MAX_MEMO, NONE, APPROX_TOKEN;
var init_text = __esm({
  "src/memory/text.ts"() {
    "use strict";
    init_language();
    CJK_CLASS = "\\p{sc=Han}\\p{sc=Hiragana}\\p{sc=Katakana}\u30FC";
    WORD = /[\p{L}\p{M}\p{N}]+(?:['’][\p{L}\p{M}\p{N}]+)*/gu;
    RUN = new RegExp(`[${CJK_CLASS}]+|[^${CJK_CLASS}]+`, "gu");
    CJK_START = new RegExp(`^[${CJK_CLASS}]`, "u");
    CJK_STOP_WORDS = /* @__PURE__ */ new Set([..."\u7684\u4E86\u662F\u5728\u548C\u4E0E\u53CA\u4E5F\u90FD\u5C31\u800C\u5427\u5417\u5462\u554A\u7740\u8FC7\u4E4B\u5176\u6216\u306E\u306F\u304C\u3092\u306B\u3067\u3068\u3082\u3078\u3084\u304B\u306A\u306D\u3088"]);
    segmenter = new Intl.Segmenter("zh", { granularity: "word" });
    memo = Object.fromEntries(LANGUAGE_CODES.map((code) => [code, /* @__PURE__ */ new Map()]));
    MAX_MEMO = 2e5;
    NONE = [];
    APPROX_TOKEN = new RegExp(`[${CJK_CLASS}]|[^\\s${CJK_CLASS}]+`, "gu");
  }
});

// src/tool/list-tasks.ts
import { z as z11 } from "zod";
var MAX_PAGE, DEFAULT_PAGE, listTasksTool;
var init_list_tasks = __esm({
  "src/tool/list-tasks.ts"() {
    "use strict";
    init_tool();
    MAX_PAGE = 100;
    DEFAULT_PAGE = 20;
    listTasksTool = defineTool({
      id: "list_tasks",
      description: 'List this conversation\'s tasks that are not finished: "queue" (waiting), "running", "triggers" (schedules: type "trigger:<kind>", nextRunAt and nextRunLocal in the user\'s time zone, lastOutcome, paused) or "all" (default). role filters queue/running by planner or worker. "finished" lists ended tasks, newest first, `limit` per page (default 20); pass the last one\'s endedAt as `before` for the next page.',
      parameters: z11.object({
        scope: z11.enum(["queue", "running", "triggers", "all", "finished"]).optional(),
        role: z11.enum(["planner", "worker"]).optional(),
        limit: z11.number().int().min(1).max(MAX_PAGE).optional(),
        before: z11.iso.datetime({ offset: true }).optional()
      }),
      async execute(args, ctx) {
        return { tasks: await ctx.tasks.listTasks(ctx, { scope: args.scope ?? "all", role: args.role, limit: args.limit, before: args.before }) };
      }
    });
  }
});

// src/untrusted/limits.ts
var MAX_UNZIPPED_BYTES, DOCUMENT_TIME_MS, PARSER_HEAP_MB, PARSER_MEMORY_GROWTH_MB, MAX_SEARCH_RESPONSE_BYTES;
var init_limits = __esm({
  "src/untrusted/limits.ts"() {
    "use strict";
    MAX_UNZIPPED_BYTES = 64 * 1024 * 1024;
    DOCUMENT_TIME_MS = 3e4;
    PARSER_HEAP_MB = 256;
    PARSER_MEMORY_GROWTH_MB = 512;
    MAX_SEARCH_RESPONSE_BYTES = 4 * 1024 * 1024;
  }
});

// src/web/guarded-fetch.ts
import { lookup as dnsLookup } from "node:dns";
import { isIP } from "node:net";
import { Agent, buildConnector, fetch as fetch2 } from "undici";
async function readCapped2(response, maxBytes) {
  if (response.body === null) return { bytes: Buffer.alloc(0), truncated: false };
  const reader2 = response.body.getReader();
  const chunks = [];
  let size = 0;
  for (; ; ) {
    const { done, value } = await reader2.read();
    if (done) return { bytes: Buffer.concat(chunks), truncated: false };
    chunks.push(value);
    size += value.byteLength;
    if (size > maxBytes) {
      await reader2.cancel();
      return { bytes: Buffer.concat(chunks).subarray(0, maxBytes), truncated: true };
    }
  }
}
function guardedLookup(policy, resolve3) {
  return (hostname3, options, callback) => {
    resolve3(hostname3, { all: true, verbatim: true }, (error, addresses) => {
      if (error) return callback(error, "", 4);
      const refusal2 = addresses.length === 0 ? `${hostname3} has no address` : addresses.map((entry) => policy.addressRefusal(hostname3, entry.address)).find((reason) => reason !== void 0);
      if (refusal2) return callback(new BlockedDestination(refusal2), "", 4);
      const wanted = options.family === 4 || options.family === 6 ? addresses.filter((entry) => entry.family === options.family) : addresses;
      if (wanted.length === 0) return callback(Object.assign(new Error(`${hostname3} has no IPv${options.family} address`), { code: "ENOTFOUND" }), "", 4);
      if (options.all) return callback(null, wanted);
      callback(null, wanted[0].address, wanted[0].family);
    });
  };
}
function unwrap(error) {
  let current = error;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    if (current instanceof BlockedDestination) return current;
    current = current.cause;
  }
  return error;
}
var MAX_REDIRECTS, REDIRECT_STATUSES, TooManyRedirects, RequestTimedOut, GuardedFetch;
var init_guarded_fetch = __esm({
  "src/web/guarded-fetch.ts"() {
    "use strict";
    init_address_policy();
    MAX_REDIRECTS = 5;
    REDIRECT_STATUSES = /* @__PURE__ */ new Set([301, 302, 303, 307, 308]);
    TooManyRedirects = class extends Error {
      name = "TooManyRedirects";
    };
    RequestTimedOut = class extends Error {
      name = "RequestTimedOut";
    };
    GuardedFetch = class {
      constructor(options) {
        this.options = options;
        const lookup = guardedLookup(options.policy, options.resolve ?? dnsLookup);
        const connect2 = buildConnector({ lookup });
        this.agent = new Agent({
          headersTimeout: options.timeoutMs,
          bodyTimeout: options.timeoutMs,
          connect: (target, callback) => {
            const refusal2 = isIP(target.hostname.replace(/^\[(.*)\]$/, "$1")) ? options.policy.addressRefusal(target.hostname, target.hostname.replace(/^\[(.*)\]$/, "$1")) : void 0;
            if (refusal2) return callback(new BlockedDestination(refusal2), null);
            connect2(target, callback);
          }
        });
      }
      options;
      agent;
      /**
       * GETs `start`, following redirects; `read` consumes the final response while the timeout still
       * runs. Throws BlockedDestination, TooManyRedirects, RequestTimedOut, or the caller's abort reason.
       */
      async get(start, signal, accept, read) {
        const controller = new AbortController();
        const timer = setTimeout(() => controller.abort(new RequestTimedOut(`did not answer completely within ${this.options.timeoutMs / 1e3} s`)), this.options.timeoutMs);
        const forward = () => controller.abort(signal.reason);
        signal.addEventListener("abort", forward, { once: true });
        try {
          signal.throwIfAborted();
          let url = start;
          for (let hops = 0; ; hops++) {
            const refusal2 = this.options.policy.hostRefusal(url.hostname);
            if (refusal2) throw new BlockedDestination(refusal2);
            const response = await fetch2(url, { redirect: "manual", signal: controller.signal, dispatcher: this.agent, headers: { accept } });
            const location = response.headers.get("location");
            if (!REDIRECT_STATUSES.has(response.status) || location === null) return await read(response, url.href);
            await response.body?.cancel();
            if (hops === MAX_REDIRECTS) throw new TooManyRedirects(`${start.href} redirected more than ${MAX_REDIRECTS} times`);
            url = new URL(location, url);
            if (url.protocol !== "http:" && url.protocol !== "https:") throw new BlockedDestination(`${start.href} redirected to ${url.protocol} (${url.href}), which fetch_url does not follow`);
          }
        } catch (error) {
          throw controller.signal.aborted ? controller.signal.reason : unwrap(error);
        } finally {
          clearTimeout(timer);
          signal.removeEventListener("abort", forward);
        }
      }
    };
  }
});

// src/search/http.ts
async function requestJson(provider, url, init, shape, signal, timeoutMs) {
  const deadline = AbortSignal.timeout(timeoutMs);
  let response;
  let body;
  try {
    response = await fetch(url, { ...init, signal: AbortSignal.any([signal, deadline]) });
    const read = await readCapped2(response, MAX_SEARCH_RESPONSE_BYTES);
    if (read.truncated) throw new SearchError(`${provider} search answered with more than ${MAX_SEARCH_RESPONSE_BYTES / 1024 / 1024} MiB, which no search result needs; not read`);
    body = read.bytes.toString("utf8");
  } catch (error) {
    if (error instanceof SearchError) throw error;
    signal.throwIfAborted();
    if (deadline.aborted) throw new SearchError(`${provider} search did not answer within ${timeoutMs / 1e3} s; try again later`);
    throw new SearchError(`${provider} search could not be reached: ${causeOf(error)}`);
  }
  if (!response.ok) throw new SearchError(statusMessage(provider, response, body));
  let json;
  try {
    json = JSON.parse(body);
  } catch {
    throw new SearchError(`${provider} search answered with something that is not JSON (${response.headers.get("content-type") ?? "no content type"}): ${body.slice(0, 200)}`);
  }
  const parsed = shape.safeParse(json);
  if (!parsed.success) throw new SearchError(`${provider} search answered with JSON of an unexpected shape: ${parsed.error.issues[0]?.message ?? ""}`);
  return parsed.data;
}
function statusMessage(provider, response, body) {
  const detail = body.slice(0, 200).trim();
  const status = `HTTP ${response.status}${detail ? `: ${detail}` : ""}`;
  if (response.status === 429) {
    const retryAfter = response.headers.get("retry-after");
    return `${provider} search is rate limited (${status}); try again ${retryAfter ? `in ${retryAfter} s` : "later"} or do without searching`;
  }
  if (response.status === 401 || response.status === 403) return `${provider} search refused the request, probably the API key or the instance's settings (${status}); searching will not work until the owner fixes it`;
  if (response.status >= 500) return `${provider} search failed on its side (${status}); try again later`;
  return `${provider} search rejected the request (${status})`;
}
function causeOf(error) {
  if (!(error instanceof Error)) return String(error);
  return error.cause instanceof Error ? error.cause.message || String(error.cause.code) : error.message;
}
var SearchError;
var init_http = __esm({
  "src/search/http.ts"() {
    "use strict";
    init_limits();
    init_guarded_fetch();
    SearchError = class extends Error {
      name = "SearchError";
    };
  }
});

// src/tool/ask-user.ts
import { z as z15 } from "zod";
var DESCRIPTION, parameters, askUserTool;
var init_ask_user = __esm({
  "src/tool/ask-user.ts"() {
    "use strict";
    init_roles();
    init_tool();
    DESCRIPTION = `Ask the user a question and end your turn at once. Their answer \u2014 a button press, typed text, or on timeout the default \u2014 comes back as this call's result {answer, source}: source "user", "default" (no answer in time; default used) or "timeout" (no answer, no default; answer is "").
Give options for a choice (shown as buttons; at most 10, each at most 75 characters). Only one question is open per conversation: asking again replaces the open one.`;
    parameters = z15.object({
      question: z15.string().trim().min(1).max(2e3),
      timeout: z15.number().int().min(1).max(7 * 86400).optional().describe("Seconds until the default is used (default 3600)"),
      default: z15.string().trim().min(1).max(200).optional().describe("Answer used when the user does not answer in time; one of options if given"),
      options: z15.array(z15.string().trim().min(1).max(75)).min(1).max(10).optional()
    }).refine((args) => !args.options || new Set(args.options.map((o) => o.toLowerCase())).size === args.options.length, { message: "options must be different from each other", path: ["options"] }).refine((args) => !args.options || args.default === void 0 || args.options.some((o) => o.toLowerCase() === args.default.toLowerCase()), {
      message: "default must be one of options",
      path: ["default"]
    });
    askUserTool = defineTool({
      id: "ask_user",
      description: DESCRIPTION,
      parameters,
      async execute(args, ctx) {
        const refused = refusal(ctx.role, "ask_user");
        if (refused) throw new ToolError(refused);
        const fallback2 = args.default === void 0 ? void 0 : args.options?.find((o) => o.toLowerCase() === args.default.toLowerCase()) ?? args.default;
        return ctx.questions.ask(ctx, { question: args.question, options: args.options, default: fallback2, timeout: args.timeout ?? 3600 });
      }
    });
  }
});

// src/tool/cancel-task.ts
import { z as z16 } from "zod";
var cancelTaskTool;
var init_cancel_task = __esm({
  "src/tool/cancel-task.ts"() {
    "use strict";
    init_tool();
    cancelTaskTool = defineTool({
      id: "cancel_task",
      description: "Cancel a queued task of this conversation (or remove a trigger). A running task is not affected. Returns {success}.",
      parameters: z16.object({ taskId: z16.string().min(1).describe("The id, or a unique prefix of at least 4 characters") }),
      async execute(args, ctx) {
        return { success: await ctx.tasks.cancelTask(ctx, args.taskId) };
      }
    });
  }
});

// src/tool/delegate.ts
import { z as z17 } from "zod";
function createDelegateTool(workers) {
  return defineTool({
    id: "delegate",
    description: DESCRIPTION2.replace("{agents}", workers.map((w) => `- ${w.name}: ${w.description}`).join("\n")),
    parameters: parameters2,
    // The rules match the target: "planner" for a role that hands work to the Planner, else the worker type.
    pattern: (args, role) => delegateTarget(role) === "planner" ? "planner" : args.worker ?? "default",
    async execute(args, ctx) {
      const shaping = ["type", "condition", "priority", "worker"].filter((field) => args[field] !== void 0);
      const refused = refusal(ctx.role, "delegate") ?? (shaping.length > 0 ? refusal(ctx.role, "shape_tasks", shaping.join(", ")) : void 0);
      if (refused) throw new ToolError(refused);
      if (args.worker !== void 0 && !workers.some((w) => w.name === args.worker)) {
        throw new ToolError(`Unknown worker type "${args.worker}". Available: ${workers.map((w) => w.name).join(", ")}.`);
      }
      return ctx.tasks.delegate(ctx, {
        prompt: ctx.tainted ? taintedPrompt(args.prompt) : args.prompt,
        type: args.type ?? "oneshot",
        condition: args.condition,
        priority: args.priority ?? 5,
        timeout: args.timeout ?? null,
        worker: args.worker,
        sessionId: args.session_id
      });
    }
  });
}
var DESCRIPTION2, parameters2;
var init_delegate = __esm({
  "src/tool/delegate.ts"() {
    "use strict";
    init_roles();
    init_condition();
    init_taint();
    init_tool();
    DESCRIPTION2 = `Delegate work and return at once with {taskId}; the result comes back later.
From the Teller: hands the request to the Planner (prompt and timeout only; the Planner does not see the chat, so make the prompt self-contained).
From the Planner: dispatches a Worker. Worker tasks are committed only when your run ends successfully \u2014 all of them or none. Set priority (0-10, higher runs first, default 5) and timeout in seconds (null: the role's default).
A "conditional" task waits until its condition holds: {kind:"task", taskId, status?: "completed"|"failed"|"any"} (a task id you got from delegate, also in this run), {kind:"time", at}, {kind:"event", name}, {kind:"all"|"any", of:[...]}. One that can never hold is cancelled. It reports on its own when it ends, not with the rest of this run's tasks.
Pass session_id (from an earlier result's <task_metadata>) to continue that task's session with its history instead of starting fresh.

Available worker types:
{agents}`;
    parameters2 = z17.object({
      prompt: z17.string().trim().min(1).describe("The task, complete and self-contained"),
      type: z17.enum(["oneshot", "conditional"]).optional().describe('Default "oneshot". Planner only'),
      condition: Condition.optional().describe('Required when type is "conditional". Planner only'),
      priority: z17.number().int().min(0).max(10).optional().describe("0-10, higher first, default 5. Planner only"),
      timeout: z17.number().int().positive().max(86400).nullable().optional().describe("Seconds; null or absent: the role's default"),
      worker: z17.string().optional().describe("Worker type (default: default). Planner only"),
      session_id: z17.string().optional().describe("Continue this earlier task session")
    }).refine((args) => args.type !== "conditional" || args.condition !== void 0, {
      message: 'type "conditional" needs a condition',
      path: ["condition"]
    });
  }
});

// src/web/decode.ts
function charsetOf(contentType) {
  return /charset\s*=\s*"?([^";\s]+)/i.exec(contentType)?.[1];
}
function decodeText(bytes, charset) {
  let decoder;
  try {
    decoder = new TextDecoder(charset ?? "utf-8");
  } catch {
    decoder = new TextDecoder("utf-8");
  }
  return decoder.decode(bytes);
}
var init_decode = __esm({
  "src/web/decode.ts"() {
    "use strict";
  }
});

// src/untrusted/isolated.ts
import { Worker } from "node:worker_threads";
function ownedBuffer(bytes) {
  const owned = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer;
  return owned ? [bytes.buffer] : [];
}
var ParseRefused, MEMORY_CHECK_MS, IsolatedWorkers;
var init_isolated = __esm({
  "src/untrusted/isolated.ts"() {
    "use strict";
    ParseRefused = class extends Error {
      name = "ParseRefused";
    };
    MEMORY_CHECK_MS = 50;
    IsolatedWorkers = class {
      constructor(entry, limits) {
        this.entry = entry;
        this.limits = limits;
      }
      entry;
      limits;
      idle = [];
      async run(job, signal, transfer = []) {
        signal.throwIfAborted();
        const { timeMs, heapMb, memoryGrowthMb } = this.limits;
        const worker = this.idle.pop() ?? new Worker(this.entry, { resourceLimits: { maxOldGenerationSizeMb: heapMb, maxYoungGenerationSizeMb: Math.min(64, heapMb / 4) } });
        worker.ref();
        let reusable = false;
        try {
          const reply = await new Promise((resolve3, reject) => {
            const fail = (error) => {
              settle();
              reject(error);
            };
            const timer = setTimeout(() => fail(new ParseRefused(`reading it took longer than ${timeMs / 1e3} s`)), timeMs);
            const rssLimit = process.memoryUsage.rss() + memoryGrowthMb * 1024 * 1024;
            const watch = setInterval(() => {
              if (process.memoryUsage.rss() > rssLimit) fail(new ParseRefused(`reading it needed more than ${memoryGrowthMb} MB of memory`));
            }, MEMORY_CHECK_MS);
            const stop = () => fail(signal.reason);
            signal.addEventListener("abort", stop, { once: true });
            const settle = () => {
              clearTimeout(timer);
              clearInterval(watch);
              signal.removeEventListener("abort", stop);
              worker.off("message", onMessage).off("error", onError).off("exit", onExit);
            };
            const onMessage = (message) => {
              settle();
              resolve3(message);
            };
            const onError = (error) => fail(error.code === "ERR_WORKER_OUT_OF_MEMORY" ? new ParseRefused(`reading it needed more than ${heapMb} MB of memory`) : error);
            const onExit = (code) => fail(new Error(`the parser's worker stopped (exit code ${code})`));
            worker.on("message", onMessage).on("error", onError).on("exit", onExit);
            worker.postMessage(job, transfer);
          });
          reusable = true;
          if ("refused" in reply) throw new ParseRefused(reply.refused);
          if ("error" in reply) throw new Error(reply.error);
          return reply.ok;
        } finally {
          if (reusable) {
            worker.unref();
            this.idle.push(worker);
          } else void worker.terminate();
        }
      }
    };
  }
});

// src/web/html-text.ts
var WORKER_ENTRY, HtmlToText;
var init_html_text = __esm({
  "src/web/html-text.ts"() {
    "use strict";
    init_isolated();
    init_limits();
    WORKER_ENTRY = new URL(import.meta.url.endsWith(".ts") ? "./html-text-worker.mjs" : "./html-text-worker.js", import.meta.url);
    HtmlToText = class {
      workers;
      constructor(budgetMs) {
        this.workers = new IsolatedWorkers(WORKER_ENTRY, { timeMs: budgetMs, heapMb: PARSER_HEAP_MB, memoryGrowthMb: PARSER_MEMORY_GROWTH_MB });
      }
      convert(job, signal) {
        return this.workers.run(job, signal, ownedBuffer(job.bytes));
      }
    };
  }
});

// src/trust/named-hosts.ts
async function fetchNeedsUser(rawUrl, ctx) {
  let url;
  try {
    url = new URL(rawUrl);
  } catch {
    return true;
  }
  if (url.search !== "" || url.username !== "" || url.password !== "") return true;
  const host = bare2(url.hostname);
  const said = await ctx.history.recent(ctx.conversation, HISTORY_MESSAGES, 0);
  return !said.some((message) => message.role === "user" && hostsIn(message.text).has(host));
}
function hostsIn(text) {
  return new Set([...text.matchAll(/[a-z0-9-]+(?:\.[a-z0-9-]+)+/gi)].map((match2) => bare2(match2[0])));
}
var HISTORY_MESSAGES, bare2;
var init_named_hosts = __esm({
  "src/trust/named-hosts.ts"() {
    "use strict";
    HISTORY_MESSAGES = 200;
    bare2 = (host) => host.toLowerCase().replace(/\.$/, "").replace(/^www\./, "");
  }
});

// src/tool/fetch-url.ts
import { z as z18 } from "zod";
function createFetchUrlTool(settings) {
  const timeoutMs = settings.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const client = new GuardedFetch({ policy: new AddressPolicy(settings.allowHosts), timeoutMs, resolve: settings.resolve });
  const html = new HtmlToText(CONVERT_BUDGET_MS);
  return defineTool({
    id: "fetch_url",
    description: "Fetch a web page or text/JSON document with HTTP GET and return it as plain text (HTML is converted to readable text). Returns the final URL after redirects, the HTTP status (error statuses are returned, not thrown), the content type, the text and whether it was truncated. Binary content such as images or PDFs is refused, and so are addresses on private networks.",
    parameters: parameters3,
    pattern: (args) => args.url,
    untrustedOutput: true,
    guardedWhenTainted: (args, ctx) => fetchNeedsUser(args.url, ctx),
    async execute({ url, maxChars = DEFAULT_MAX_CHARS }, ctx) {
      try {
        return await client.get(httpUrl2(url), ctx.abort, ACCEPT, async (response, finalUrl) => {
          const contentType = response.headers.get("content-type") ?? "";
          const kind = textKind(contentType);
          if (kind === "binary") {
            await response.body?.cancel();
            throw new ToolError(`${finalUrl} is ${contentType}, which is not text; fetch_url only returns text, HTML and JSON`);
          }
          const body = await readCapped2(response, settings.maxBytes);
          if (kind === "unknown" && body.bytes.includes(0)) {
            throw new ToolError(`${finalUrl} has no content type and looks binary; fetch_url only returns text`);
          }
          const converted = kind === "html" ? await html.convert({ bytes: body.bytes, charset: charsetOf(contentType), maxChars }, ctx.abort) : { text: decodeText(body.bytes, charsetOf(contentType)), cut: false };
          return {
            url: finalUrl,
            status: response.status,
            contentType,
            text: converted.text.slice(0, maxChars),
            truncated: body.truncated || converted.cut || converted.text.length > maxChars
          };
        });
      } catch (err) {
        ctx.abort.throwIfAborted();
        if (err instanceof ToolError) throw err;
        if (err instanceof BlockedDestination) throw new ToolError(`refused: ${err.message}`);
        if (err instanceof TooManyRedirects) throw new ToolError(err.message);
        if (err instanceof ParseRefused) throw new ToolError(`${url} was not read: ${err.message}`);
        if (err instanceof RequestTimedOut) throw new ToolError(`${url} ${err.message}`);
        throw new ToolError(`fetching ${url} failed: ${causeMessage(err)}`);
      }
    }
  });
}
function httpUrl2(raw) {
  let url;
  try {
    url = new URL(raw);
  } catch {
    throw new ToolError(`not a valid absolute URL: ${raw}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ToolError(`only http and https URLs can be fetched, not ${url.protocol} (${raw})`);
  }
  return url;
}
function textKind(contentType) {
  const mime = contentType.split(";")[0].trim().toLowerCase();
  if (mime === "") return "unknown";
  if (mime === "text/html" || mime === "application/xhtml+xml") return "html";
  if (mime.startsWith("text/") || mime === "application/json" || mime.endsWith("+json")) return "text";
  if (mime === "application/xml" || mime.endsWith("+xml")) return "text";
  return "binary";
}
function causeMessage(err) {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause;
  if (cause instanceof Error) {
    const code = cause.code;
    return cause.message || code || err.message;
  }
  return err.message;
}
var DEFAULT_TIMEOUT_MS, CONVERT_BUDGET_MS, DEFAULT_MAX_CHARS, MAX_CHARS, ACCEPT, parameters3;
var init_fetch_url = __esm({
  "src/tool/fetch-url.ts"() {
    "use strict";
    init_address_policy();
    init_decode();
    init_guarded_fetch();
    init_isolated();
    init_html_text();
    init_named_hosts();
    init_tool();
    DEFAULT_TIMEOUT_MS = 15e3;
    CONVERT_BUDGET_MS = 1e4;
    DEFAULT_MAX_CHARS = 2e4;
    MAX_CHARS = 1e5;
    ACCEPT = "text/html, text/*;q=0.9, application/json;q=0.9, */*;q=0.1";
    parameters3 = z18.object({
      url: z18.string().describe("Absolute http:// or https:// URL."),
      maxChars: z18.number().int().min(1).max(MAX_CHARS).optional().describe(`Cut the returned text to this many characters (default ${DEFAULT_MAX_CHARS}).`)
    });
  }
});

// src/tool/forget.ts
import { z as z19 } from "zod";
var parameters4, forgetTool;
var init_forget = __esm({
  "src/tool/forget.ts"() {
    "use strict";
    init_tool();
    parameters4 = z19.object({
      query: z19.string().optional().describe('Text to find (case-insensitive, at least 3 characters), e.g. "Berlin": every note line containing it is removed or rewritten'),
      path: z19.string().optional().describe('Instead of query: one note to remove whole (or rewrite), e.g. "memory.md" or "memory/2026-03-01-cat.md"'),
      replacement: z19.string().optional().describe('What the removed text becomes, when the user corrects rather than forgets (e.g. "The user lives in Munich.")')
    });
    forgetTool = defineTool({
      id: "forget",
      description: 'Correct or remove what is remembered about this user ("forget that I live in Berlin", "I moved to Munich"). With query, every line of memory.md and the daily notes that contains it is removed \u2014 or, with replacement, rewritten to that text (once per note); with path, that whole note is removed or rewritten. Empty dated sections and empty notes go too. Returns {changes: [{path, removed, added?, deleted?, chain?}]}; tell the user what changed (an empty list: nothing matched). chain: the note stated a fact that changed (an address, a number\u2026): the notes that stated it, oldest first, the last was current; forgetting the current one makes the one before it current again.',
      parameters: parameters4,
      guardedWhenTainted: true,
      async execute(args, ctx) {
        const result2 = await ctx.notes.forget(ctx.user, args);
        if ("error" in result2) throw new ToolError(result2.error);
        return result2;
      }
    });
  }
});

// src/tool/history.ts
function toMessages(messages2) {
  return { messages: messages2.map(({ role, text, createdAt }) => ({ role, text, createdAt })) };
}
var init_history = __esm({
  "src/tool/history.ts"() {
    "use strict";
  }
});

// src/tool/iso-date.ts
function parseIsoDate(value, name, bound = "start") {
  const match2 = ISO.exec(value.trim());
  const date = match2 && toDate(match2, bound);
  if (!date) throw new ToolError(`${name}: "${value}" is not an ISO 8601 date; use e.g. 2026-11-22 or 2026-11-22T14:30:00Z`);
  return date;
}
function parseRange(after, before) {
  const range = {
    after: after === void 0 ? void 0 : parseIsoDate(after, "after"),
    before: before === void 0 ? void 0 : parseIsoDate(before, "before", "end")
  };
  if (range.after && range.before && range.after > range.before) throw new ToolError(`after (${after}) is later than before (${before})`);
  return range;
}
function toDate(match2, bound) {
  const [, y, mo, d, h, mi, s, fraction, zone] = match2;
  const [year, month, day] = [Number(y), Number(mo) - 1, Number(d)];
  const [hour, minute, second] = [Number(h ?? 0), Number(mi ?? 0), Number(s ?? 0)];
  const offset = zone === void 0 ? 0 : offsetMinutes(zone);
  if (month < 0 || month > 11 || day < 1 || day > daysInMonth(year, month)) return void 0;
  if (hour > 23 || minute > 59 || second > 59 || offset === void 0) return void 0;
  const date = /* @__PURE__ */ new Date(0);
  if (h === void 0) {
    date.setFullYear(year, month, day);
    if (bound === "end") date.setHours(23, 59, 59, 999);
    else date.setHours(0, 0, 0, 0);
    return date;
  }
  const ms = Math.floor(Number(`0.${fraction ?? 0}`) * 1e3);
  if (zone === void 0) {
    date.setFullYear(year, month, day);
    date.setHours(hour, minute, second, ms);
    return date;
  }
  date.setUTCFullYear(year, month, day);
  date.setUTCHours(hour, minute, second, ms);
  return new Date(date.getTime() - offset * 6e4);
}
function daysInMonth(year, month) {
  const last = /* @__PURE__ */ new Date(0);
  last.setUTCFullYear(year, month + 1, 0);
  return last.getUTCDate();
}
function offsetMinutes(zone) {
  if (zone.toUpperCase() === "Z") return 0;
  const digits = zone.slice(1).replace(":", "");
  const [hours, minutes] = [Number(digits.slice(0, 2)), Number(digits.slice(2) || 0)];
  if (hours > 23 || minutes > 59) return void 0;
  return (zone.startsWith("-") ? -1 : 1) * (hours * 60 + minutes);
}
var ISO;
var init_iso_date = __esm({
  "src/tool/iso-date.ts"() {
    "use strict";
    init_tool();
    ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;
  }
});

// src/tool/get-history-by-time.ts
import { z as z20 } from "zod";
var parameters5, getHistoryByTimeTool;
var init_get_history_by_time = __esm({
  "src/tool/get-history-by-time.ts"() {
    "use strict";
    init_history();
    init_iso_date();
    init_tool();
    parameters5 = z20.object({
      after: z20.string().describe("ISO 8601 date or date-time, inclusive; a bare date starts at its local midnight"),
      before: z20.string().optional().describe("ISO 8601 date or date-time, inclusive (default now); a bare date includes that whole day")
    });
    getHistoryByTimeTool = defineTool({
      id: "get_history_by_time",
      description: "Read this conversation's chat messages sent between after and before (both inclusive), oldest first. Returns {messages: [{role, text, createdAt}]}.",
      parameters: parameters5,
      async execute({ after, before }, ctx) {
        const range = parseRange(after, before);
        return toMessages(await ctx.history.between(ctx.conversation, range.after, range.before ?? /* @__PURE__ */ new Date()));
      }
    });
  }
});

// src/tool/get-recent-history.ts
import { z as z21 } from "zod";
var MAX_COUNT2, parameters6, getRecentHistoryTool;
var init_get_recent_history = __esm({
  "src/tool/get-recent-history.ts"() {
    "use strict";
    init_history();
    init_tool();
    MAX_COUNT2 = 200;
    parameters6 = z21.object({
      count: z21.number().int().describe(`How many messages, 1-${MAX_COUNT2} (clamped)`),
      offset: z21.number().int().optional().describe("How many of the newest messages to skip first (default 0), to page further back")
    });
    getRecentHistoryTool = defineTool({
      id: "get_recent_history",
      description: "Read this conversation's chat history: the `count` messages before the newest `offset` ones, oldest first. Returns {messages: [{role, text, createdAt}]}.",
      parameters: parameters6,
      async execute({ count, offset = 0 }, ctx) {
        if (offset < 0) throw new ToolError(`offset must be 0 or more, got ${offset}`);
        const clamped = Math.min(MAX_COUNT2, Math.max(1, count));
        return toMessages(await ctx.history.recent(ctx.conversation, clamped, offset));
      }
    });
  }
});

// src/tool/list-files.ts
import { lstat as lstat2, readdir as readdir5, stat as stat3 } from "node:fs/promises";
import path7 from "node:path";
import { z as z22 } from "zod";
var MAX_ENTRIES, parameters7, listFilesTool;
var init_list_files = __esm({
  "src/tool/list-files.ts"() {
    "use strict";
    init_tool();
    init_workspace();
    MAX_ENTRIES = 1e3;
    parameters7 = z22.object({
      path: z22.string().optional().describe('Folder relative to the workspace (default ".", the workspace itself).'),
      recursive: z22.boolean().optional().describe("Also list everything inside subfolders (default false).")
    });
    listFilesTool = defineTool({
      id: "list_files",
      description: `List files and folders in a workspace folder, optionally recursively. Paths are relative to the workspace, sorted, each folder followed by its contents. At most ${MAX_ENTRIES} entries; truncated says whether more exist. Symlinks are not listed.`,
      parameters: parameters7,
      pattern: (args) => pathPattern(args.path ?? "."),
      async execute({ path: relPath = ".", recursive = false }, ctx) {
        const dir = await workspacePath(ctx, relPath);
        const entries = [];
        let truncated = false;
        const walk = async (folder) => {
          const children = await readdir5(folder, { withFileTypes: true });
          children.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
          for (const child of children) {
            ctx.abort.throwIfAborted();
            if (!child.isFile() && !child.isDirectory()) continue;
            if (entries.length === MAX_ENTRIES) {
              truncated = true;
              return;
            }
            const abs = path7.join(folder, child.name);
            const isDir = child.isDirectory();
            entries.push({
              path: workspaceRelative(userWorkspace(ctx), abs),
              type: isDir ? "dir" : "file",
              size: isDir ? 0 : (await lstat2(abs)).size
            });
            if (isDir && recursive) {
              await walk(abs);
              if (truncated) return;
            }
          }
        };
        try {
          if (!(await stat3(dir)).isDirectory()) throw new ToolError(`${relPath} is a file, not a folder; use read_file`);
          await walk(dir);
        } catch (err) {
          throw fsError(err, relPath);
        }
        return { entries, truncated };
      }
    });
  }
});

// src/document/document-text.ts
function documentKind(name) {
  const extension = /\.([A-Za-z0-9]+)$/.exec(name)?.[1]?.toLowerCase();
  return extension === "pdf" || extension === "docx" ? extension : void 0;
}
var MAX_DOCUMENT_BYTES, WORKER_ENTRY2, DOCUMENT_LIMITS, DocumentReader, reader, documentText;
var init_document_text = __esm({
  "src/document/document-text.ts"() {
    "use strict";
    init_isolated();
    init_limits();
    MAX_DOCUMENT_BYTES = 50 * 1024 * 1024;
    WORKER_ENTRY2 = new URL(import.meta.url.endsWith(".ts") ? "./document-worker.mjs" : "./document-worker.js", import.meta.url);
    DOCUMENT_LIMITS = { timeMs: DOCUMENT_TIME_MS, heapMb: PARSER_HEAP_MB, memoryGrowthMb: PARSER_MEMORY_GROWTH_MB };
    DocumentReader = class {
      workers;
      constructor(limits = DOCUMENT_LIMITS) {
        this.workers = new IsolatedWorkers(WORKER_ENTRY2, limits);
      }
      /** Throws ParseRefused for a file over a limit (a zip bomb, a PDF that would fill the memory or
       *  take too long), an Error with the parser's reason for a file that is not a readable document
       *  of that kind. `data` is moved to the worker when it owns its memory: do not use it after. */
      text(kind, data, signal) {
        return this.workers.run({ kind, bytes: data }, signal, ownedBuffer(data));
      }
    };
    reader = new DocumentReader();
    documentText = (kind, data, signal) => reader.text(kind, data, signal);
  }
});

// src/tool/read-file.ts
import { open as open3 } from "node:fs/promises";
import { z as z23 } from "zod";
async function readSmallFile(file, relPath, signal, maxBytes) {
  try {
    const handle = await open3(file, "r");
    try {
      const info = await handle.stat();
      if (info.isDirectory()) throw new ToolError(`${relPath} is a folder; use list_files`);
      if (info.size > maxBytes) {
        throw new ToolError(`${relPath} is ${info.size} bytes, over the ${maxBytes} byte limit of read_file`);
      }
      return await handle.readFile({ signal });
    } finally {
      await handle.close();
    }
  } catch (err) {
    throw fsError(err, relPath);
  }
}
var DEFAULT_LIMIT, BINARY_SNIFF_BYTES, parameters8, readFileTool;
var init_read_file = __esm({
  "src/tool/read-file.ts"() {
    "use strict";
    init_document_text();
    init_isolated();
    init_tool();
    init_workspace();
    DEFAULT_LIMIT = 2e3;
    BINARY_SNIFF_BYTES = 8 * 1024;
    parameters8 = z23.object({
      path: z23.string().describe("File path relative to the workspace."),
      offset: z23.number().int().min(1).optional().describe("First line to return, counting from 1 (default 1)."),
      limit: z23.number().int().min(1).optional().describe(`How many lines to return (default ${DEFAULT_LIMIT}).`)
    });
    readFileTool = defineTool({
      id: "read_file",
      description: "Read a text file from the workspace. Returns the requested lines, the file's total line count and whether more lines follow; use offset and limit to page through long files. PDFs (with page markers) and Word documents (.docx) are returned as their text. Other binary files and files over 5 MiB (documents: 50 MiB) are refused.",
      parameters: parameters8,
      pattern: (args) => pathPattern(args.path),
      untrustedOutput: true,
      async execute({ path: relPath, offset = 1, limit = DEFAULT_LIMIT }, ctx) {
        const file = await workspacePath(ctx, relPath);
        const kind = documentKind(relPath);
        const data = await readSmallFile(file, relPath, ctx.abort, kind ? MAX_DOCUMENT_BYTES : MAX_FILE_BYTES);
        if (!kind && data.subarray(0, BINARY_SNIFF_BYTES).includes(0)) {
          throw new ToolError(`${relPath} is a binary file; read_file only reads text, PDFs and .docx`);
        }
        const text = kind ? await documentText(kind, data, ctx.abort).catch((error) => {
          ctx.abort.throwIfAborted();
          if (error instanceof ParseRefused) throw new ToolError(`${relPath} was refused: ${error.message}`);
          throw new ToolError(`${relPath} could not be read as ${kind}: ${error instanceof Error ? error.message : String(error)}`);
        }) : data.toString("utf8");
        const lines = text === "" ? [] : text.split("\n");
        if (text.endsWith("\n")) lines.pop();
        if (offset > 1 && offset > lines.length) {
          throw new ToolError(`offset ${offset} is past the end of ${relPath}, which has ${lines.length} lines`);
        }
        const end = offset - 1 + limit;
        return {
          path: workspaceRelative(userWorkspace(ctx), file),
          content: lines.slice(offset - 1, end).join("\n"),
          totalLines: lines.length,
          truncated: end < lines.length
        };
      }
    });
  }
});

// src/tool/read-resource.ts
import { z as z24 } from "zod";
function createReadResourceTool(reader2) {
  return defineTool({
    id: READ_RESOURCE,
    description: "Read a resource of an MCP server by its URI \u2014 e.g. a resource link a tool result named. Text comes back as text; an image is saved in the workspace.",
    parameters: parameters9,
    pattern: (args) => `${args.server} ${args.uri}`,
    execute: ({ server, uri }, ctx) => reader2.read(server, uri, ctx)
  });
}
var READ_RESOURCE, parameters9;
var init_read_resource = __esm({
  "src/tool/read-resource.ts"() {
    "use strict";
    init_tool();
    READ_RESOURCE = "read_resource";
    parameters9 = z24.object({
      server: z24.string().min(1).describe("The MCP server the resource is from (the prefix of its tools, e.g. github for github_*)."),
      uri: z24.string().min(1).describe("The resource's URI, as a tool result named it (resource link or embedded resource).")
    });
  }
});

// src/tool/remember.ts
import { z as z25 } from "zod";
var MAX_NOTE_CHARS, parameters10, rememberTool;
var init_remember = __esm({
  "src/tool/remember.ts"() {
    "use strict";
    init_tool();
    MAX_NOTE_CHARS = 2e4;
    parameters10 = z25.object({
      content: z25.string().describe("What to remember, self-contained (who, what, when) so it makes sense when found later"),
      longTerm: z25.boolean().optional().describe("true: a lasting fact or preference, kept in memory.md; false (default): a dated note of today")
    });
    rememberTool = defineTool({
      id: "remember",
      description: "Save something to this user's memory (Markdown notes the Planner can search later). By default it becomes today's note memory/YYYY-MM-DD-<slug>.md; with longTerm it is appended to memory.md under today's date. Returns the note's path.",
      parameters: parameters10,
      guardedWhenTainted: true,
      async execute({ content, longTerm = false }, ctx) {
        if (content.trim() === "") throw new ToolError("content is empty: say what to remember");
        if (content.length > MAX_NOTE_CHARS) throw new ToolError(`content is ${content.length} characters; a note holds at most ${MAX_NOTE_CHARS}`);
        return ctx.memory.remember(ctx.user, content, longTerm);
      }
    });
  }
});

// src/tool/reply.ts
import { z as z26 } from "zod";
var replyTool;
var init_reply = __esm({
  "src/tool/reply.ts"() {
    "use strict";
    init_tool();
    replyTool = defineTool({
      id: "reply",
      description: "Send a message to the user in this chat. Markdown is allowed. Returns nothing.",
      parameters: z26.object({ text: z26.string().trim().min(1).max(1e5).describe("The message") }),
      async execute(args, ctx) {
        await ctx.replies.reply(ctx, args.text);
        return null;
      }
    });
  }
});

// src/tool/schedule.ts
var DESCRIPTION3, scheduleTool;
var init_schedule = __esm({
  "src/tool/schedule.ts"() {
    "use strict";
    init_roles();
    init_request();
    init_tool();
    DESCRIPTION3 = `Create a durable schedule; returns {taskId} (cancel it with cancel_task, see it with list_tasks scope "triggers"). Each run is a Worker task with prompt (and timeout); its report goes to this conversation, or to target.
- "recurring": every interval seconds (at least 60), or by cron (5 or 6 fields as in crontab, L/W/# and @daily-style nicknames allowed, e.g. "0 9 * * 1-5") read in timezone (IANA, e.g. "Europe/Berlin"; default: the user's time zone). A run never starts while the previous one is still running (that due time is skipped).
- "scheduled": once, at runAt (ISO 8601 with offset, e.g. "2026-03-01T09:00:00+01:00"; in the future, at most a year ahead).
- "conditional": each time condition becomes true, then waits cooldown seconds. Condition: {kind:"task", taskId, status?: "completed"|"failed"|"any"}, {kind:"time", at}, {kind:"event", name} (raised by the owner or a webhook), {kind:"all"|"any", of:[...]}.
A due time missed while Steward was down runs once if at most maxLateness seconds late (default 3600) unless onMissed is "skip".
quiet: true for checks that should speak only when something is found: a run answering exactly NO_REPORT posts nothing.
triggerId: the id (or a unique prefix) of an existing schedule of this conversation; the request (complete: type, prompt, cadence) replaces its definition in place, keeping its id and history.`;
    scheduleTool = defineTool({
      id: "schedule",
      description: DESCRIPTION3,
      parameters: ScheduleRequest,
      guardedWhenTainted: true,
      async execute(args, ctx) {
        const refused = refusal(ctx.role, "schedule");
        if (refused) throw new ToolError(refused);
        return ctx.schedules.schedule(ctx, args);
      }
    });
  }
});

// src/tool/search-memory.ts
import { z as z27 } from "zod";
var MAX_LIMIT, parameters11, searchMemoryTool;
var init_search_memory = __esm({
  "src/tool/search-memory.ts"() {
    "use strict";
    init_text();
    init_iso_date();
    init_tool();
    MAX_LIMIT = 50;
    parameters11 = z27.object({
      query: z27.string().describe("Words to look for, in any language (English and German are stemmed, German compounds split, Chinese and Japanese segmented); small typos are tolerated"),
      after: z27.string().optional().describe("ISO 8601 date or date-time; only notes dated on or after it"),
      before: z27.string().optional().describe("ISO 8601 date or date-time; only notes dated on or before it"),
      limit: z27.number().int().optional().describe(`Number of hits, 1-${MAX_LIMIT}, default 5`)
    });
    searchMemoryTool = defineTool({
      id: "search_memory",
      description: `Search the user's memory notes (full text, BM25; with an embedding model configured, also by meaning). A note's date is its day: the daily note's date, or the entry date in memory.md; after/before are inclusive. Returns {hits: [{source, date, content, score, supersededBy?}]}, best first, and among about equally good matches the newest first; content is the matching passage, at most 300 characters. Facts change (a move, a new job, a new number): a note that states a newer value comes before the one it replaced, which carries supersededBy (the newer note's source) and is history. For what was true at a time ("where did we live in 2024"), pass after/before: the newest note inside the window is the fact of that time.`,
      parameters: parameters11,
      // Notes were written by a model, and past talk quotes what it read: data, not instructions.
      untrustedOutput: true,
      async execute({ query, after, before, limit = 5 }, ctx) {
        if (query.trim() === "") throw new ToolError("query is empty");
        if (queryWords(query).length === 0) throw new ToolError(`query "${query}" has no searchable words (only stop words or punctuation)`);
        if (limit < 1 || limit > MAX_LIMIT) throw new ToolError(`limit must be between 1 and ${MAX_LIMIT}, got ${limit}`);
        const range = parseRange(after, before);
        return { hits: await ctx.memory.search(ctx.user, { query, ...range, limit }) };
      }
    });
  }
});

// src/tool/send-file.ts
import { stat as stat4 } from "node:fs/promises";
import path8 from "node:path";
import { z as z28 } from "zod";
var MAX_SEND_BYTES, parameters12, sendFileTool;
var init_send_file = __esm({
  "src/tool/send-file.ts"() {
    "use strict";
    init_media_types();
    init_tool();
    init_workspace();
    MAX_SEND_BYTES = 50 * 1024 * 1024;
    parameters12 = z28.object({
      path: z28.string().describe("File path relative to the workspace."),
      caption: z28.string().max(1e3).optional().describe("A short text shown with the file.")
    });
    sendFileTool = defineTool({
      id: "send_file",
      description: "Send a file from the workspace to the user's chat (images are shown as pictures), with an optional caption. Files over 50 MB are refused. Returns the path and size sent.",
      parameters: parameters12,
      guardedWhenTainted: true,
      pattern: (args) => pathPattern(args.path),
      async execute({ path: relPath, caption = "" }, ctx) {
        const file = await workspacePath(ctx, relPath);
        const info = await stat4(file).catch((error) => {
          throw fsError(error, relPath);
        });
        if (!info.isFile()) throw new ToolError(`${relPath} is not a file`);
        if (info.size === 0) throw new ToolError(`${relPath} is empty; chats refuse empty files`);
        if (info.size > MAX_SEND_BYTES) throw new ToolError(`${relPath} is ${sizeText(info.size)}, over the ${sizeText(MAX_SEND_BYTES)} limit for sending files`);
        const name = path8.basename(file);
        await ctx.replies.sendFile(ctx, { path: file, name, mimeType: mediaTypeOf(name) }, caption.trim());
        return { sent: workspaceRelative(userWorkspace(ctx), file), bytes: info.size };
      }
    });
  }
});

// src/tool/set-timezone.ts
import { z as z29 } from "zod";
var setTimeZoneTool;
var init_set_timezone = __esm({
  "src/tool/set-timezone.ts"() {
    "use strict";
    init_tool();
    setTimeZoneTool = defineTool({
      id: "set_timezone",
      description: `Store the user's time zone when they tell you where they are or which zone they want ("I live in Berlin" \u2192 "Europe/Berlin"). It is used for the date you see, for schedules without an explicit zone, and for times shown to the user; the user can also type /timezone <zone>. Returns {timeZone}.`,
      parameters: z29.object({ timeZone: z29.string().min(1).describe('IANA time zone name, e.g. "Europe/Berlin", "America/New_York"') }),
      async execute({ timeZone }, ctx) {
        const set = await ctx.profiles.setTimeZone(ctx.user, timeZone);
        if ("error" in set) throw new ToolError(set.error);
        return set;
      }
    });
  }
});

// src/tool/web-search.ts
import { z as z30 } from "zod";
function createWebSearchTool(provider) {
  return defineTool({
    id: WEB_SEARCH,
    description: "Search the web. Returns a list of results, each with title, url and snippet; fetch a result's URL with fetch_url (workers) to read it in full.",
    parameters: parameters13,
    pattern: (args) => args.query,
    untrustedOutput: true,
    async execute({ query, limit = DEFAULT_LIMIT2 }, ctx) {
      try {
        return await provider.search(query, limit, ctx.abort);
      } catch (error) {
        if (error instanceof SearchError) throw new ToolError(error.message);
        throw error;
      }
    }
  });
}
var WEB_SEARCH, DEFAULT_LIMIT2, MAX_LIMIT2, parameters13;
var init_web_search = __esm({
  "src/tool/web-search.ts"() {
    "use strict";
    init_http();
    init_tool();
    WEB_SEARCH = "web_search";
    DEFAULT_LIMIT2 = 5;
    MAX_LIMIT2 = 20;
    parameters13 = z30.object({
      query: z30.string().trim().min(1).describe("What to search the web for."),
      limit: z30.number().int().min(1).max(MAX_LIMIT2).optional().describe(`How many results to return (default ${DEFAULT_LIMIT2}, at most ${MAX_LIMIT2}).`)
    });
  }
});

// src/tool/write-file.ts
import { randomBytes as randomBytes5 } from "node:crypto";
import { appendFile, lstat as lstat3, mkdir as mkdir5, rename, rm as rm2, stat as stat5, writeFile as writeFile3 } from "node:fs/promises";
import path9 from "node:path";
import { z as z31 } from "zod";
function createWriteFileTool(settings) {
  const lastWrite = /* @__PURE__ */ new Map();
  const inTurn = async (root, write) => {
    const previous = lastWrite.get(root);
    let done;
    const mine = new Promise((resolve3) => done = resolve3);
    lastWrite.set(root, mine);
    await previous;
    try {
      return await write();
    } finally {
      done();
      if (lastWrite.get(root) === mine) lastWrite.delete(root);
    }
  };
  return defineTool({
    id: "write_file",
    description: `Write a text file in the workspace, replacing it unless append is true. Creates missing folders. Returns the path and the number of bytes written. Content is limited to 5 MiB, the whole workspace to ${Math.floor(settings.quotaBytes / MB)} MiB.`,
    parameters: parameters14,
    pattern: (args) => pathPattern(args.path),
    async execute({ path: relPath, content, append = false }, ctx) {
      const bytes = Buffer.byteLength(content);
      if (bytes > MAX_FILE_BYTES) {
        throw new ToolError(`content is ${bytes} bytes, over the ${MAX_FILE_BYTES} byte limit of write_file`);
      }
      const file = await workspacePath(ctx, relPath);
      const root = userWorkspace(ctx);
      await inTurn(root, async () => {
        try {
          const existing = await stat5(file).catch(() => void 0);
          if (existing?.isDirectory()) throw new ToolError(`${relPath} is a folder, not a file`);
          const after = await workspaceUsage(root) + bytes - (append ? 0 : (await lstat3(file).catch(() => void 0))?.size ?? 0);
          if (after > settings.quotaBytes) {
            throw new ToolError(`the workspace is full: this write would bring it to ${(after / MB).toFixed(1)} MiB of the ${(settings.quotaBytes / MB).toFixed(0)} MiB allowed; write less, or overwrite files that are no longer needed`);
          }
          await mkdir5(path9.dirname(file), { recursive: true });
          if (append) await appendFile(file, content);
          else await replaceAtomically(file, content, ctx.abort);
        } catch (err) {
          throw fsError(err, relPath);
        }
      });
      return { path: workspaceRelative(root, file), bytes };
    }
  });
}
async function replaceAtomically(file, content, signal) {
  const temp = path9.join(path9.dirname(file), `.${path9.basename(file)}.${randomBytes5(6).toString("hex")}.tmp`);
  try {
    await writeFile3(temp, content, { flag: "wx", signal });
    await rename(temp, file);
  } catch (err) {
    await rm2(temp, { force: true });
    throw err;
  }
}
var parameters14, MB;
var init_write_file = __esm({
  "src/tool/write-file.ts"() {
    "use strict";
    init_tool();
    init_workspace();
    parameters14 = z31.object({
      path: z31.string().describe("File path relative to the workspace; missing folders are created."),
      content: z31.string().describe("Text to write (UTF-8)."),
      append: z31.boolean().optional().describe("Add to the end of the file instead of replacing it (default false).")
    });
    MB = 1024 * 1024;
  }
});

// src/tool/registry.ts
function allTools(workers, settings) {
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
    ...settings.search ? [createWebSearchTool(settings.search)] : [],
    ...settings.resources ? [createReadResourceTool(settings.resources)] : []
  ];
}
function builtInToolIds() {
  const unused = { fetch: { maxBytes: 0, allowHosts: { hosts: /* @__PURE__ */ new Set(), cidrs: [] } }, workspace: { quotaBytes: 0 } };
  return [...allTools([], unused).map((tool2) => tool2.id), WEB_SEARCH, READ_RESOURCE];
}
var init_registry = __esm({
  "src/tool/registry.ts"() {
    "use strict";
    init_ask_user();
    init_cancel_task();
    init_delegate();
    init_fetch_url();
    init_forget();
    init_get_history_by_time();
    init_get_recent_history();
    init_list_files();
    init_list_tasks();
    init_read_file();
    init_read_resource();
    init_remember();
    init_reply();
    init_schedule();
    init_search_memory();
    init_send_file();
    init_set_timezone();
    init_web_search();
    init_write_file();
  }
});

// src/mcp/names.ts
function sanitise(name) {
  const clean = name.replace(/[^A-Za-z0-9_-]/g, "_");
  return clean === "" ? "_" : clean;
}
function toolName(server, tool2, taken) {
  const base = `${server}_${sanitise(tool2)}`.slice(0, TOOL_NAME_MAX);
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    const suffix = `_${n}`;
    const candidate = base.slice(0, TOOL_NAME_MAX - suffix.length) + suffix;
    if (!taken.has(candidate)) return candidate;
  }
}
var TOOL_NAME_MAX, SERVER_NAME_MAX;
var init_names = __esm({
  "src/mcp/names.ts"() {
    "use strict";
    TOOL_NAME_MAX = 64;
    SERVER_NAME_MAX = 32;
  }
});

// src/mcp/config.ts
import { readFileSync as readFileSync4 } from "node:fs";
import { dirname as dirname2, resolve as resolve2 } from "node:path";
import { z as z32 } from "zod";
function readMcpConfig(path11, builtIn) {
  const fail = (reason) => new ConfigError("MCP_CONFIG", `MCP_CONFIG: ${reason} (${path11})`);
  let json;
  try {
    json = JSON.parse(readFileSync4(path11, "utf8"));
  } catch (error) {
    throw fail(`${EXPECTED}: ${error instanceof Error ? error.message : String(error)}`);
  }
  let file;
  try {
    file = McpFile.parse(json);
  } catch (error) {
    const issue = error.issues[0];
    throw fail(`${EXPECTED}: ${issue.path.join(".") || "file"}: ${issue.message}`);
  }
  const servers = [];
  for (const [key, entry] of Object.entries(file.mcpServers)) {
    const name = sanitise(key).slice(0, SERVER_NAME_MAX);
    const twin = servers.find((server) => server.name === name);
    if (twin) throw fail(`servers "${key}" and another both become "${name}" once reduced to A-Z, a-z, 0-9, _ and -; rename one`);
    const shadowed = builtIn.find((id) => id.startsWith(`${name}_`));
    if (shadowed) throw fail(`server name "${key}" would make its tools look like the built-in tool ${shadowed}; rename it`);
    const spec = "command" in entry ? { ...entry, kind: "stdio", cwd: entry.cwd === void 0 ? void 0 : resolve2(dirname2(path11), entry.cwd) } : { ...entry, kind: "remote" };
    servers.push({ name, spec });
  }
  return servers;
}
var StdioServer, RemoteServer, ServerEntry, McpFile, EXPECTED;
var init_config2 = __esm({
  "src/mcp/config.ts"() {
    "use strict";
    init_config();
    init_names();
    StdioServer = z32.object({
      type: z32.literal("stdio").optional(),
      command: z32.string().min(1, "expected the command that starts the server"),
      args: z32.array(z32.string()).default([]),
      env: z32.record(z32.string(), z32.string()).default({}),
      cwd: z32.string().min(1).optional()
    });
    RemoteServer = z32.object({
      // "http" (and "streamable-http") try Streamable HTTP, then SSE; "sse" goes straight to SSE.
      type: z32.enum(["http", "streamable-http", "sse"]).optional(),
      url: z32.url({ protocol: /^https?$/, error: "expected an http(s) URL" }),
      headers: z32.record(z32.string(), z32.string()).default({})
    });
    ServerEntry = z32.union([StdioServer, RemoteServer], { error: 'expected {"command", "args"?, "env"?, "cwd"?} or {"url", "headers"?}' });
    McpFile = z32.object({ mcpServers: z32.record(z32.string().min(1), ServerEntry) });
    EXPECTED = 'expected a JSON file {"mcpServers": {"<name>": {"command", "args"?, "env"?, "cwd"?} | {"url", "headers"?}}}';
  }
});

// src/mcp/elicitation.ts
import { z as z33 } from "zod";
async function elicit(ctx, server, params, timeoutMs, seq) {
  if (ctx.permit && !await ctx.permit(ELICITATION_PERMISSION, server)) return { action: "decline" };
  const required = new Set(params.requestedSchema.required ?? []);
  const fields = Object.entries(params.requestedSchema.properties).map(([key, schema2]) => ({ key, schema: schema2, required: required.has(key) }));
  const content = {};
  for (const [index, field] of fields.entries()) {
    const intro = index === 0 ? `The MCP server \u201C${server}\u201D asks: ${params.message}

` : "";
    const reply = await askField(ctx, `${intro}${fieldText(field)}`, field, timeoutMs, `elicit:${seq}:${field.key}`);
    if ("action" in reply) return { action: reply.action };
    if (reply.value !== void 0) content[field.key] = reply.value;
  }
  return { action: "accept", content };
}
async function askField(ctx, text, field, timeoutMs, key) {
  const choices = choicesOf(field.schema);
  const timeout = Math.round(timeoutMs / 1e3);
  if (choices) {
    const { answer: answer2, source } = await ctx.questions.inquire(ctx, key, { question: text, options: [...choices.map((c) => c.label), DECLINE], timeout });
    if (source !== "user") return { action: "cancel" };
    const choice = choices.find((c) => c.label === answer2);
    return choice ? { value: choice.value } : { action: "decline" };
  }
  let problem = "";
  for (let attempt = 0; attempt < TRIES; attempt++) {
    const question = { question: `${problem}${text}

${howToAnswer(field)}`, timeout };
    const { answer: answer2, source } = await ctx.questions.inquire(ctx, attempt === 0 ? key : `${key}:${attempt}`, question);
    if (source !== "user") return { action: "cancel" };
    if (answer2.trim().toLowerCase() === DECLINE.toLowerCase()) return { action: "decline" };
    const parsed = parseField(field, answer2.trim());
    if ("value" in parsed) return parsed;
    problem = `That does not fit: ${parsed.error}.

`;
  }
  return { action: "cancel" };
}
function choicesOf(schema2) {
  if (schema2.type === "boolean") return [{ label: "Yes", value: true }, { label: "No", value: false }];
  if (schema2.type !== "string") return void 0;
  if ("oneOf" in schema2 && Array.isArray(schema2.oneOf)) return schema2.oneOf.map((o) => ({ label: o.title || o.const, value: o.const }));
  if ("enum" in schema2 && Array.isArray(schema2.enum)) {
    const names2 = "enumNames" in schema2 && Array.isArray(schema2.enumNames) ? schema2.enumNames : [];
    return schema2.enum.map((value, i) => ({ label: names2[i] ?? value, value }));
  }
  return void 0;
}
function fieldText(field) {
  const { title, description } = field.schema;
  return `*${title ?? field.key}*${description ? ` \u2014 ${description}` : ""}`;
}
function howToAnswer(field) {
  const schema2 = field.schema;
  const what = schema2.type === "array" ? `Reply with one or more of: ${multiChoices(schema2.items).map((c) => c.label).join(", ")} (separated by commas)` : schema2.type === "number" || schema2.type === "integer" ? `Reply with ${schema2.type === "integer" ? "a whole number" : "a number"}` : "Reply with text";
  const optional = field.required ? "" : `, \u201C${EMPTY}\u201D to leave it out`;
  return `_${what}${optional}, \u201C${DECLINE}\u201D to decline, /skip to cancel._`;
}
function multiChoices(items) {
  if (items?.anyOf) return items.anyOf.map((o) => ({ label: o.title ?? o.const, value: o.const }));
  return (items?.enum ?? []).map((value) => ({ label: value, value }));
}
function parseField(field, text) {
  if (text === EMPTY && !field.required) return { value: void 0 };
  const schema2 = field.schema;
  let value = text;
  if (schema2.type === "number" || schema2.type === "integer") value = text === "" ? Number.NaN : Number(text.replace(",", "."));
  if (schema2.type === "array") {
    const choices = multiChoices(schema2.items);
    const picked = text.split(",").map((part) => part.trim()).filter(Boolean);
    const values = picked.map((part) => choices.find((c, i) => c.label.toLowerCase() === part.toLowerCase() || String(i + 1) === part)?.value);
    if (values.some((v) => v === void 0)) return { error: `pick from ${choices.map((c) => c.label).join(", ")}` };
    value = values;
  }
  const check = checker(field.schema).safeParse(value);
  return check.success ? { value: check.data } : { error: check.error.issues.map((issue) => issue.message).join("; ") };
}
function checker(schema2) {
  try {
    return z33.fromJSONSchema(schema2);
  } catch {
    return z33.unknown();
  }
}
var ELICITATION_PERMISSION, DECLINE, TRIES, EMPTY;
var init_elicitation = __esm({
  "src/mcp/elicitation.ts"() {
    "use strict";
    ELICITATION_PERMISSION = "mcp_elicitation";
    DECLINE = "Decline";
    TRIES = 3;
    EMPTY = "-";
  }
});

// src/mcp/sampling.ts
import { McpError, ErrorCode } from "@modelcontextprotocol/sdk/types.js";
async function sample(ctx, server, params) {
  if (!ctx.complete || !ctx.permit) throw new McpError(ErrorCode.InvalidRequest, "sampling is not available to this call");
  if (!await ctx.permit(SAMPLING_PERMISSION, server)) throw new McpError(ErrorCode.InvalidRequest, `the user did not allow ${server} to use the model (permission ${SAMPLING_PERMISSION})`);
  const result2 = await ctx.complete({
    system: params.systemPrompt,
    messages: params.messages.map((message) => message.role === "user" ? { role: "user", content: userParts(message.content) } : { role: "assistant", content: textOf2(message.content) }),
    maxOutputTokens: params.maxTokens,
    temperature: params.temperature,
    stopSequences: params.stopSequences
  });
  return { role: "assistant", content: { type: "text", text: result2.text }, model: result2.model, stopReason: result2.finishReason === "length" ? "maxTokens" : "endTurn" };
}
function partsOf(content) {
  return Array.isArray(content) ? content : [content];
}
function userParts(content) {
  return partsOf(content).map((part) => {
    if (part.type === "text") return { type: "text", text: part.text };
    if (part.type === "image") return { type: "image", image: part.data, mediaType: part.mimeType };
    return { type: "text", text: `[${part.type} left out]` };
  });
}
function textOf2(content) {
  return partsOf(content).map((part) => part.type === "text" ? part.text : `[${part.type}]`).join("\n");
}
var SAMPLING_PERMISSION;
var init_sampling = __esm({
  "src/mcp/sampling.ts"() {
    "use strict";
    SAMPLING_PERMISSION = "mcp_sampling";
  }
});

// src/mcp/result.ts
import { mkdir as mkdir6, writeFile as writeFile4 } from "node:fs/promises";
import path10 from "node:path";
async function formatResult(result2, { server, ctx }) {
  const images = [];
  const forUser = [];
  const lines = [];
  for (const [index, part] of result2.content.entries()) {
    if (forUserOnly(part)) {
      if (part.type === "text") forUser.push(part.text);
      continue;
    }
    if (part.type === "image") {
      const saved = await saveImage(ctx, server, part.data, part.mimeType, index);
      images.push(saved.ref);
      lines.push(`[image ${part.mimeType}, saved as ${saved.relative}]`);
    } else lines.push(partText(part));
  }
  if (forUser.length > 0) {
    await ctx.replies.reply(ctx, forUser.join("\n\n"));
    lines.push(`[${forUser.length} part(s) meant for the user were sent to them]`);
  }
  if (lines.length === 0 && result2.structuredContent !== void 0) lines.push(JSON.stringify(result2.structuredContent));
  const { text, truncated } = bounded(lines.join("\n"));
  return { text, ...truncated ? { truncated } : {}, ...images.length ? { images } : {} };
}
async function formatResource(result2, format) {
  const content = result2.contents.map(
    (item) => "blob" in item && item.mimeType?.startsWith("image/") ? { type: "image", data: item.blob, mimeType: item.mimeType } : { type: "resource", resource: item }
  );
  return formatResult({ content }, format);
}
function forUserOnly(part) {
  const audience = part.annotations?.audience;
  return audience !== void 0 && audience.length > 0 && !audience.includes("assistant");
}
function partText(part) {
  switch (part.type) {
    case "text":
      return part.text;
    case "audio":
      return `[audio ${part.mimeType}, ${Math.floor(part.data.length * 3 / 4)} bytes]`;
    case "resource": {
      const { uri, mimeType } = part.resource;
      const head = `[resource ${uri}${mimeType ? ` (${mimeType})` : ""}]`;
      return "text" in part.resource ? `${head}
${part.resource.text}` : `${head} ${Math.floor(part.resource.blob.length * 3 / 4)} bytes of binary content`;
    }
    case "resource_link":
      return `[resource link ${part.uri}: ${part.name}${part.description ? ` \u2014 ${part.description}` : ""}] (read_resource reads it)`;
  }
}
async function saveImage(ctx, server, base64, mediaType, index) {
  const relative = path10.posix.join("mcp", server, `${ctx.sessionId}-${ctx.callId}-${index}.${extensionOf(mediaType)}`.replace(/[^A-Za-z0-9._-]/g, "_"));
  const file = path10.join(userWorkspaceDir(ctx.workspaceDir, ctx.user), relative);
  await mkdir6(path10.dirname(file), { recursive: true });
  await writeFile4(file, Buffer.from(base64, "base64"));
  return { ref: { path: file, mediaType }, relative };
}
function bounded(text) {
  if (text.length <= MAX_RESULT_CHARS) return { text, truncated: false };
  return { text: `${text.slice(0, MAX_RESULT_CHARS)}
[\u2026 ${text.length - MAX_RESULT_CHARS} more characters cut]`, truncated: true };
}
var MAX_RESULT_CHARS;
var init_result = __esm({
  "src/mcp/result.ts"() {
    "use strict";
    init_media_types();
    init_workspace();
    MAX_RESULT_CHARS = 2e4;
  }
});

// src/mcp/client.ts
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode as ErrorCode2,
  ListRootsRequestSchema,
  McpError as McpError2,
  ToolListChangedNotificationSchema
} from "@modelcontextprotocol/sdk/types.js";
function stewardClient(requests) {
  const client = new Client(CLIENT_INFO, { capabilities: { elicitation: { form: {} }, sampling: {}, roots: { listChanged: true } } });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    if (request.params.mode === "url") throw new McpError2(ErrorCode2.InvalidParams, "Steward accepts form elicitation only");
    return requests.elicit(request.params);
  });
  client.setRequestHandler(CreateMessageRequestSchema, (request) => requests.sample(request.params));
  client.setRequestHandler(ListRootsRequestSchema, () => requests.roots());
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => requests.toolsChanged());
  return client;
}
var CLIENT_INFO;
var init_client = __esm({
  "src/mcp/client.ts"() {
    "use strict";
    CLIENT_INFO = { name: "steward", version: "0.1.0" };
  }
});

// src/mcp/connect.ts
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
async function connect(spec, options) {
  return spec.kind === "stdio" ? connectStdio(spec, options) : connectRemote(spec, options);
}
async function connectStdio(spec, options) {
  const transport = new StdioClientTransport({ command: spec.command, args: spec.args, env: spec.env, cwd: spec.cwd, stderr: "pipe" });
  const tail = [];
  let partial = "";
  transport.stderr?.on("data", (chunk) => {
    const lines = (partial + chunk.toString("utf8")).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines.map((l) => l.trimEnd()).filter(Boolean)) {
      options.onStderrLine?.(line);
      tail.push(line);
      if (tail.length > STDERR_TAIL_LINES) tail.shift();
    }
  });
  const client = options.newClient();
  const stderrTail = () => [...tail, partial.trim()].filter(Boolean).join(" | ");
  try {
    await connectOrClose(client, transport, options.timeoutMs);
  } catch (error) {
    throw new Error(withStderr(messageOf(error), stderrTail()));
  }
  return { client, transport: "stdio", stderrTail };
}
async function connectRemote(spec, options) {
  const url = new URL(spec.url);
  const requestInit = { headers: spec.headers };
  if (spec.type !== "sse") {
    const client = options.newClient();
    try {
      await connectOrClose(client, new StreamableHTTPClientTransport(url, { requestInit }), options.timeoutMs);
      return { client, transport: "streamable-http", stderrTail: () => "" };
    } catch (streamable) {
      try {
        return await connectSse(url, requestInit, options);
      } catch (sse) {
        throw new Error(`Streamable HTTP: ${messageOf(streamable)}; SSE: ${messageOf(sse)}`);
      }
    }
  }
  return connectSse(url, requestInit, options);
}
async function connectSse(url, requestInit, options) {
  const client = options.newClient();
  await connectOrClose(client, new SSEClientTransport(url, { requestInit }), options.timeoutMs);
  return { client, transport: "sse", stderrTail: () => "" };
}
async function connectOrClose(client, transport, timeoutMs) {
  try {
    await client.connect(transport, { timeout: timeoutMs });
  } catch (error) {
    await client.close().catch(() => {
    });
    throw error;
  }
}
function withStderr(reason, stderrTail) {
  return stderrTail ? `${reason}; stderr: ${stderrTail}` : reason;
}
function messageOf(error) {
  return error instanceof Error ? error.message : String(error);
}
var STDERR_TAIL_LINES;
var init_connect = __esm({
  "src/mcp/connect.ts"() {
    "use strict";
    STDERR_TAIL_LINES = 5;
  }
});

// src/mcp/calls.ts
var CallsInFlight;
var init_calls = __esm({
  "src/mcp/calls.ts"() {
    "use strict";
    CallsInFlight = class {
      calls = /* @__PURE__ */ new Map();
      next = 0;
      /** Records a call until the returned function is called. */
      add(ctx) {
        const key = this.next++;
        this.calls.set(key, ctx);
        return () => void this.calls.delete(key);
      }
      /** The call a server request belongs to; undefined when there is none, or no single user's. */
      owner() {
        const calls2 = [...this.calls.values()];
        const newest2 = calls2.at(-1);
        if (!newest2) return void 0;
        return calls2.every((ctx) => ctx.user === newest2.user && ctx.conversation === newest2.conversation) ? newest2 : void 0;
      }
    };
  }
});

// src/mcp/roots.ts
import { mkdirSync as mkdirSync2 } from "node:fs";
import { pathToFileURL as pathToFileURL2 } from "node:url";
function workspaceRoot(ctx) {
  const dir = userWorkspaceDir(ctx.workspaceDir, ctx.user);
  mkdirSync2(dir, { recursive: true });
  return { uri: pathToFileURL2(dir).href, name: "workspace" };
}
var init_roots = __esm({
  "src/mcp/roots.ts"() {
    "use strict";
    init_workspace();
  }
});

// src/mcp/server-requests.ts
import { ErrorCode as ErrorCode3, McpError as McpError3 } from "@modelcontextprotocol/sdk/types.js";
var CallerRequests;
var init_server_requests = __esm({
  "src/mcp/server-requests.ts"() {
    "use strict";
    init_calls();
    init_elicitation();
    init_roots();
    init_sampling();
    CallerRequests = class {
      constructor(server, options) {
        this.server = server;
        this.options = options;
      }
      server;
      options;
      calls = new CallsInFlight();
      /** The root the server was last told of (`roots/list_changed` when a call brings another). */
      root;
      /** Whether this connection's server has asked for its roots (only then is it told of a change). */
      asked = false;
      elicitations = 0;
      async elicit(params) {
        const ctx = this.calls.owner();
        if (!ctx) {
          this.options.log.warn({ mcp: this.server }, `MCP server ${this.server} asked a question outside a call of one user's; cancelled`);
          return { action: "cancel" };
        }
        return elicit(ctx, this.server, params, this.options.elicitationTimeoutMs, this.elicitations++);
      }
      sample(params) {
        const ctx = this.calls.owner();
        if (!ctx) throw new McpError3(ErrorCode3.InvalidRequest, "sampling is answered only during a tool call of one user's");
        return sample(ctx, this.server, params);
      }
      roots() {
        const ctx = this.calls.owner();
        if (ctx) this.root = workspaceRoot(ctx).uri;
        this.asked = true;
        return { roots: this.root ? [{ uri: this.root, name: "workspace" }] : [] };
      }
      toolsChanged() {
        this.options.toolsChanged();
      }
      /** Before a call: a server that knows of another user's workspace is told its roots changed. */
      async beforeCall(ctx) {
        const uri = workspaceRoot(ctx).uri;
        if (uri === this.root) return;
        this.root = uri;
        if (this.asked) await this.options.client()?.sendRootsListChanged().catch(() => {
        });
      }
      /** A new connection: a new server process or session, which has not asked yet. */
      connected() {
        this.asked = false;
      }
    };
  }
});

// src/mcp/tools.ts
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode as ErrorCode4, McpError as McpError4 } from "@modelcontextprotocol/sdk/types.js";
import { z as z34 } from "zod";
function callable(tool2) {
  return tool2.execution?.taskSupport !== "required";
}
function mcpTool(source, tool2, name) {
  const inputSchema = { ...tool2.inputSchema, properties: tool2.inputSchema.properties ?? {} };
  const title = tool2.title ?? tool2.annotations?.title;
  const about = tool2.description ?? `${tool2.name} (MCP server ${source.server})`;
  return defineTool({
    id: name,
    description: title && title !== about ? `${title}: ${about}` : about,
    parameters: checker2(inputSchema),
    inputSchema,
    readOnly: tool2.annotations?.readOnlyHint === true,
    // The arguments, so a rule can tell calls apart and an owner asked to allow one sees what it does.
    pattern: (args) => JSON.stringify(args).slice(0, PATTERN_CHARS),
    // What a server answers is outside content; only a tool it declares read-only may run
    // unasked once the run has read such content.
    untrustedOutput: true,
    ...tool2.annotations?.readOnlyHint !== true && { guardedWhenTainted: true },
    async execute(args, ctx) {
      const done = source.calls.add(ctx);
      try {
        const result2 = await callOnce(source, tool2, name, args, ctx);
        const output = await formatResult(result2, { server: source.server, ctx });
        if (result2.isError) throw new ToolError(`${name} reported an error: ${output.text}`);
        return output;
      } finally {
        done();
      }
    }
  });
}
async function callOnce(source, tool2, name, args, ctx, retried = false) {
  let progressed = false;
  try {
    await source.beforeCall(ctx);
    return await source.client().callTool({ name: tool2.name, arguments: args }, void 0, {
      timeout: source.timeoutMs,
      resetTimeoutOnProgress: true,
      maxTotalTimeout: source.maxMs,
      onprogress: (progress) => {
        progressed = true;
        ctx.progress?.(progressText(progress));
      },
      signal: ctx.abort
    });
  } catch (error) {
    ctx.abort.throwIfAborted();
    if (error instanceof ToolError) throw new ToolError(`${name}: ${error.message}`);
    const sessionLost = error instanceof StreamableHTTPError && error.code === 404;
    const unanswered = error instanceof TypeError && error.message === "fetch failed" && (tool2.annotations?.readOnlyHint === true || tool2.annotations?.idempotentHint === true);
    if (!retried && (sessionLost || unanswered)) {
      await source.reconnect();
      return callOnce(source, tool2, name, args, ctx, true);
    }
    const timedOut = error instanceof McpError4 && error.code === ErrorCode4.RequestTimeout;
    if (timedOut || !(error instanceof McpError4)) source.onUnanswered(error);
    if (timedOut && progressed && /maximum total/i.test(error.message)) throw new ToolError(`${name} was still running after ${source.maxMs / 1e3} s (MCP_TOOL_MAX_SECONDS); the call was cancelled`);
    if (timedOut) throw new ToolError(`${name} did not answer within ${source.timeoutMs / 1e3} s (MCP_TOOL_TIMEOUT); the call was cancelled`);
    if (error instanceof McpError4 && error.code !== ErrorCode4.ConnectionClosed) throw new ToolError(`${name} failed: ${error.message}`);
    const down = source.whyDown();
    throw new ToolError(down ? `${name}: the connection was lost during the call; ${down}` : `${name}: MCP server "${source.server}" could not be reached: ${messageOf(error)}`);
  }
}
function progressText({ progress, total, message }) {
  const amount = total !== void 0 && total > 0 ? total === 1 || total === 100 ? `${Math.round(progress / total * 100)}%` : `${progress}/${total}` : `${progress}`;
  return message ? `${amount} ${message}` : amount;
}
function checker2(schema2) {
  try {
    return z34.fromJSONSchema(schema2);
  } catch {
    return z34.record(z34.string(), z34.unknown());
  }
}
var PATTERN_CHARS;
var init_tools = __esm({
  "src/mcp/tools.ts"() {
    "use strict";
    init_tool();
    init_connect();
    init_result();
    PATTERN_CHARS = 200;
  }
});

// src/mcp/managed-server.ts
async function listTools(connection, timeoutMs) {
  const tools = [];
  if (!connection.client.getServerCapabilities()?.tools) return tools;
  let cursor;
  do {
    const page = await connection.client.listTools(cursor ? { cursor } : void 0, { timeout: timeoutMs });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}
var PING_TIMEOUT_MS, TRANSPORT_PING_TIMEOUT_MS, ManagedServer;
var init_managed_server = __esm({
  "src/mcp/managed-server.ts"() {
    "use strict";
    init_tool();
    init_result();
    init_client();
    init_connect();
    init_names();
    init_server_requests();
    init_tools();
    PING_TIMEOUT_MS = 5e3;
    TRANSPORT_PING_TIMEOUT_MS = 2e3;
    ManagedServer = class {
      constructor(config, options) {
        this.config = config;
        this.options = options;
        this.requests = new CallerRequests(config.name, {
          elicitationTimeoutMs: options.elicitationTimeoutMs,
          log: options.log,
          client: () => this.connection?.client,
          toolsChanged: () => this.toolsChanged()
        });
        this.source = {
          server: config.name,
          timeoutMs: options.toolTimeoutMs,
          maxMs: options.toolMaxMs,
          calls: this.requests.calls,
          client: () => {
            if (this.connection) return this.connection.client;
            throw new ToolError(`${this.whyDown() ?? `MCP server "${this.name}" is not connected`}`);
          },
          beforeCall: (ctx) => this.requests.beforeCall(ctx),
          onUnanswered: () => this.connection && void this.check(this.connection, PING_TIMEOUT_MS),
          reconnect: () => this.reconnect(),
          whyDown: () => this.whyDown()
        };
      }
      config;
      options;
      state = "starting";
      connection;
      connectedAt = 0;
      current = [];
      lastError;
      failures = 0;
      timer;
      pinging = false;
      attempts = 0;
      restartAt = 0;
      /** A re-listing under way after tools/list_changed, or a reconnection after a lost session. */
      changing;
      instructionsText = "";
      requests;
      source;
      get name() {
        return this.config.name;
      }
      /** The server's tools while it runs or restarts (a call then says it restarts); none once it failed. */
      tools() {
        return this.current;
      }
      /** Settles when a change of the tool list under way (tools/list_changed, a reconnection) is done. */
      settled() {
        return this.changing ?? Promise.resolve();
      }
      /** The server's `instructions` from its handshake ("" when none or not connected). */
      instructions() {
        return this.connection ? this.instructionsText : "";
      }
      /** One of the server's resources, formatted like a tool result (within its time limit). */
      async readResource(uri, ctx) {
        const client = this.source.client();
        if (!client.getServerCapabilities()?.resources) throw new ToolError(`MCP server "${this.name}" offers no resources`);
        try {
          await this.requests.beforeCall(ctx);
          return await formatResource(await client.readResource({ uri }, { timeout: this.options.toolTimeoutMs, signal: ctx.abort }), { server: this.name, ctx });
        } catch (error) {
          ctx.abort.throwIfAborted();
          throw error instanceof ToolError ? error : new ToolError(`read_resource ${this.name} ${uri} failed: ${messageOf(error)}`);
        }
      }
      /** Why the server's tools cannot be called now, and when they can be again; undefined while it runs. */
      whyDown() {
        if (this.state === "running") return void 0;
        if (this.state === "restarting") {
          const seconds = Math.max(1, Math.ceil((this.restartAt - Date.now()) / 1e3));
          return `MCP server "${this.name}" is restarting (${this.lastError ?? "it stopped"}); try again in about ${seconds} s`;
        }
        if (this.state === "starting") return `MCP server "${this.name}" is starting; try again in a few seconds`;
        return `MCP server "${this.name}" is down (${this.lastError ?? "stopped"})`;
      }
      /** Settles after the first attempt, whether it connected or a restart was scheduled. */
      start() {
        return this.attempt();
      }
      async stop() {
        this.state = "stopped";
        clearTimeout(this.timer);
        const connection = this.connection;
        this.connection = void 0;
        this.current = [];
        await connection?.client.close().catch(() => {
        });
      }
      status() {
        return {
          name: this.name,
          state: this.state,
          transport: this.connection?.transport,
          tools: this.current.map((tool2) => tool2.id),
          lastError: this.lastError,
          failures: this.failures
        };
      }
      async attempt() {
        const { log } = this.options;
        let connection;
        this.attempts++;
        this.requests.connected();
        try {
          connection = await connect(this.config.spec, {
            timeoutMs: this.options.startTimeoutMs,
            onStderrLine: (line) => log.debug({ mcp: this.name, stderr: line }, "MCP server stderr"),
            newClient: () => stewardClient(this.requests)
          });
          const listed = await listTools(connection, this.options.startTimeoutMs);
          if (this.state === "stopped") return void await connection.client.close();
          this.connection = connection;
          this.connectedAt = Date.now();
          this.current = this.define(listed);
          this.instructionsText = connection.client.getInstructions()?.trim() ?? "";
          this.state = "running";
          const live = connection;
          live.client.onclose = () => this.lost(live, withStderr("the connection closed", live.stderrTail()));
          live.client.onerror = (error) => {
            log.debug({ mcp: this.name, err: error }, "MCP transport error");
            void this.check(live, TRANSPORT_PING_TIMEOUT_MS);
          };
          if (this.attempts > 1) log.info({ mcp: this.status() }, `MCP server ${this.name} running again, tools: ${this.current.map((tool2) => tool2.id).join(", ") || "none"}`);
        } catch (error) {
          await connection?.client.close().catch(() => {
          });
          if (this.state === "stopped") return;
          this.retry(connection ? withStderr(messageOf(error), connection.stderrTail()) : messageOf(error));
        }
      }
      define(listed) {
        const taken = new Set(this.options.taken());
        return listed.filter(callable).map((tool2) => {
          const definition = mcpTool(this.source, tool2, toolName(this.name, tool2.name, taken));
          taken.add(definition.id);
          return definition;
        });
      }
      /** tools/list_changed: the list is read again; the next model step waits for it (settled). */
      toolsChanged() {
        const connection = this.connection;
        if (!connection) return;
        const relisting = listTools(connection, this.options.startTimeoutMs).then(
          (listed) => {
            if (connection !== this.connection) return;
            this.current = this.define(listed);
            this.options.log.info({ mcp: this.name }, `MCP server ${this.name} changed its tools: ${this.current.map((tool2) => tool2.id).join(", ") || "none"}`);
          },
          (error) => this.options.log.warn({ mcp: this.name, err: error }, `MCP server ${this.name} changed its tools but could not list them`)
        );
        void this.track(relisting);
      }
      /** The session was lost (a Streamable HTTP server restarted while idle): a new connection at
       *  once, not a failure — the call that found out is tried once more on it. */
      reconnect() {
        const connection = this.connection;
        if (this.changing) return this.changing;
        if (!connection) return Promise.resolve();
        this.options.log.info({ mcp: this.name }, `MCP server ${this.name} lost the session; reconnecting`);
        this.connection = void 0;
        connection.client.onclose = void 0;
        void connection.client.close().catch(() => {
        });
        this.state = "restarting";
        return this.track(this.attempt());
      }
      track(change) {
        const tracked = change.finally(() => {
          if (this.changing === tracked) this.changing = void 0;
        });
        this.changing = tracked;
        return tracked;
      }
      /** A call got no answer (a timeout, a broken connection): a server that does not answer a
       *  ping either is treated as gone, so a hung or vanished server is restarted. */
      async check(connection, timeoutMs) {
        if (this.pinging || connection !== this.connection) return;
        this.pinging = true;
        try {
          await connection.client.ping({ timeout: timeoutMs });
        } catch (error) {
          this.lost(connection, `it did not answer a ping: ${messageOf(error)}`);
        } finally {
          this.pinging = false;
        }
      }
      lost(connection, reason) {
        if (connection !== this.connection || this.state === "stopped") return;
        this.connection = void 0;
        if (Date.now() - this.connectedAt >= this.options.backoff.maxMs) this.failures = 0;
        void connection.client.close().catch(() => {
        });
        this.retry(reason);
      }
      retry(reason) {
        const { log, backoff } = this.options;
        this.lastError = reason;
        this.failures++;
        if (this.failures >= backoff.maxFailures) {
          this.state = "failed";
          this.current = [];
          log.error({ mcp: this.name, reason, failures: this.failures }, `MCP server ${this.name} failed ${this.failures} times in a row; given up until Steward restarts`);
          return;
        }
        const delayMs = Math.min(backoff.initialMs * 2 ** (this.failures - 1), backoff.maxMs);
        this.state = "restarting";
        this.restartAt = Date.now() + delayMs;
        log.warn({ mcp: this.name, reason, retryInMs: delayMs }, `MCP server ${this.name} is down: ${reason}`);
        this.timer = setTimeout(() => void this.attempt(), delayMs);
        this.timer.unref();
      }
    };
  }
});

// src/mcp/hub.ts
var hub_exports = {};
__export(hub_exports, {
  McpHub: () => McpHub,
  mcpStatus: () => mcpStatus,
  serverHealth: () => serverHealth,
  startMcp: () => startMcp
});
function serverHealth(status) {
  const state = status.state === "running" ? "up" : status.state === "restarting" || status.state === "starting" ? "restarting" : "down";
  return { name: status.name, state, tools: status.state === "running" ? status.tools.length : 0, transport: status.transport, lastError: state === "up" ? void 0 : status.lastError };
}
async function startMcp(config, log, builtIn) {
  if (!config.mcp.configFile) return void 0;
  const hub = new McpHub(readMcpConfig(config.mcp.configFile, builtIn), {
    toolTimeoutMs: config.mcp.toolTimeoutMs,
    toolMaxMs: config.mcp.toolMaxMs,
    elicitationTimeoutMs: config.mcp.elicitationTimeoutMs,
    builtIn,
    log
  });
  await hub.start();
  return hub;
}
async function mcpStatus(config, log) {
  const hub = await startMcp(config, log, builtInToolIds());
  if (!hub) return [];
  try {
    return hub.status();
  } finally {
    await hub.stop();
  }
}
var DEFAULT_BACKOFF, START_TIMEOUT_MS, DEFAULT_ELICITATION_TIMEOUT_MS, McpHub;
var init_hub = __esm({
  "src/mcp/hub.ts"() {
    "use strict";
    init_registry();
    init_tool();
    init_config2();
    init_elicitation();
    init_sampling();
    init_managed_server();
    DEFAULT_BACKOFF = { initialMs: 1e3, maxMs: 6e4, maxFailures: 10 };
    START_TIMEOUT_MS = 3e4;
    DEFAULT_ELICITATION_TIMEOUT_MS = 3e5;
    McpHub = class {
      servers;
      log;
      constructor(configs, options) {
        this.log = options.log;
        const builtIn = new Set(options.builtIn);
        this.servers = configs.map(
          (config) => new ManagedServer(config, {
            toolTimeoutMs: options.toolTimeoutMs,
            toolMaxMs: options.toolMaxMs ?? options.toolTimeoutMs * 10,
            elicitationTimeoutMs: options.elicitationTimeoutMs ?? DEFAULT_ELICITATION_TIMEOUT_MS,
            startTimeoutMs: options.startTimeoutMs ?? START_TIMEOUT_MS,
            backoff: options.backoff ?? DEFAULT_BACKOFF,
            log: options.log,
            taken: () => /* @__PURE__ */ new Set([...builtIn, ...this.servers.filter((s) => s.name !== config.name).flatMap((s) => s.tools().map((tool2) => tool2.id))])
          })
        );
      }
      /** Starts every server at once and settles when each has connected or scheduled a restart;
       *  then logs one line per server with its state and tools. */
      async start() {
        const { log } = this;
        await Promise.all(this.servers.map((server) => server.start()));
        for (const status of this.status()) {
          const line = `MCP server ${status.name}: ${status.state}${status.state === "running" ? `, tools: ${status.tools.join(", ") || "none"}` : `: ${status.lastError}`}`;
          if (status.state === "running") log.info({ mcp: status }, line);
          else log.warn({ mcp: status }, line);
        }
      }
      /** One stand-in per server (`<server>_*`) that the agent loop replaces with the server's tools of the moment. */
      families() {
        return this.servers.map((server) => toolFamily(`${server.name}_*`, () => server.tools(), () => server.settled()));
      }
      /** The connected servers' `instructions`, for the Worker's system prompt ("" when none). */
      instructions() {
        const parts = this.servers.flatMap((server) => {
          const text = server.instructions();
          return text ? [`## MCP server ${server.name} (tools ${server.name}_*)

${text}`] : [];
        });
        return parts.length ? `# Instructions of the MCP servers

${parts.join("\n\n")}` : "";
      }
      /** Each server as /healthz and `steward status` show it. */
      health() {
        return this.status().map(serverHealth);
      }
      /** Workers may use every MCP tool, servers may ask the user questions, and a server's use of
       *  the Worker's model is asked of the user — unless PERMISSIONS_FILE, which comes after, says
       *  otherwise (the pattern of mcp_sampling and mcp_elicitation is the server's name). */
      grants() {
        return [
          ...this.servers.map((server) => ({ permission: `${server.name}_*`, pattern: "*", action: "allow" })),
          { permission: ELICITATION_PERMISSION, pattern: "*", action: "allow" },
          { permission: SAMPLING_PERMISSION, pattern: "*", action: "ask" }
        ];
      }
      /** read_resource: a resource of one of the servers. */
      async read(server, uri, ctx) {
        const managed = this.servers.find((candidate) => candidate.name === server);
        if (!managed) throw new ToolError(`no MCP server "${server}"; the servers are ${this.servers.map((s) => s.name).join(", ")}`);
        return managed.readResource(uri, ctx);
      }
      status() {
        return this.servers.map((server) => server.status());
      }
      async stop() {
        await Promise.all(this.servers.map((server) => server.stop()));
      }
    };
  }
});

// bench/soak.ts
import { mkdtempSync, rmSync as rmSync2 } from "node:fs";
import { tmpdir as tmpdir2 } from "node:os";
import { join as join9 } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import pino2 from "pino";

// src/app.ts
import { readFileSync as readFileSync5 } from "node:fs";
import { join as join7 } from "node:path";

// src/agent/agents.ts
init_config();
import { readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import matter from "gray-matter";
import { z as z4 } from "zod";

// src/user/time-zone.ts
var formatters = /* @__PURE__ */ new Map();
function formattersOf(zone) {
  let found = formatters.get(zone);
  if (!found) {
    found = {
      local: new Intl.DateTimeFormat("en-GB", { timeZone: zone, dateStyle: "full", timeStyle: "long" }),
      short: new Intl.DateTimeFormat("en-GB", { timeZone: zone, weekday: "short", day: "numeric", month: "short", year: "numeric", hour: "2-digit", minute: "2-digit", hourCycle: "h23" }),
      offset: new Intl.DateTimeFormat("en-US", { timeZone: zone, timeZoneName: "longOffset", year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23" })
    };
    formatters.set(zone, found);
  }
  return found;
}
function longLocalTime(at2, zone) {
  return formattersOf(zone).local.format(at2);
}
function shortLocalTime(at2, zone) {
  const date = typeof at2 === "string" ? new Date(at2) : at2;
  return `${formattersOf(zone).short.format(date)} (${zone})`;
}
function isoInZone(at2, zone) {
  const parts = Object.fromEntries(formattersOf(zone).offset.formatToParts(at2).map((part) => [part.type, part.value]));
  const offset = parts.timeZoneName === "GMT" ? "+00:00" : parts.timeZoneName.slice(3);
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}${offset}`;
}

// src/agent/environment.ts
var ENV_OPEN = "<env>";
var SERVER_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone;
function environment(now2, where, timeZone = SERVER_ZONE) {
  return [
    ENV_OPEN,
    `  Current time: ${longLocalTime(now2, timeZone)} (time zone ${timeZone}; ISO ${isoInZone(now2, timeZone)})`,
    `  Channel: ${where.conversation.split(":")[0]}`,
    `  Conversation: ${where.conversation}`,
    `  User: ${where.user}`,
    "</env>"
  ].join("\n");
}
function isEnvironment(message) {
  return message.role === "user" && typeof message.content === "string" && message.content.startsWith(ENV_OPEN);
}

// src/agent/agents.ts
var FrontMatter = z4.object({
  description: z4.string().min(1),
  model: z4.string().regex(/^[a-z-]+:.+$/, "expected <provider>:<model-id>").optional(),
  tools: z4.array(z4.string()).optional()
}).strict();
var DEFAULT_WORKER = "default";
var WORKER_NAME = /^[a-z0-9][a-z0-9_-]*$/;
var RESERVED = /* @__PURE__ */ new Set(["teller", "planner", "compaction", DEFAULT_WORKER]);
var UNTRUSTED_RULE = "untrusted-content.md";
function loadAgents(dir) {
  const rule = readFileSync(join(dir, UNTRUSTED_RULE), "utf8").trim();
  const acting = (prompt) => `${prompt}

${rule}`;
  const read = (file) => readFileSync(join(dir, file), "utf8").trim();
  const workers = /* @__PURE__ */ new Map([
    [DEFAULT_WORKER, { name: DEFAULT_WORKER, role: "worker", description: "General-purpose worker: web pages, files in its workspace.", prompt: acting(read("worker.md")) }]
  ]);
  const workerDir = join(dir, "workers");
  for (const file of safeList(workerDir).filter((f) => f.endsWith(".md")).sort()) {
    const name = basename(file, ".md");
    const where = `prompts/workers/${file}`;
    if (!WORKER_NAME.test(name) || RESERVED.has(name)) throw new ConfigError(where, `${where}: a worker type's name must be lowercase letters, digits, - or _, and not ${[...RESERVED].join(", ")}`);
    const parsed = matter(readFileSync(join(workerDir, file), "utf8"));
    const front = FrontMatter.safeParse(parsed.data);
    if (!front.success) throw new ConfigError(where, `${where}: ${front.error.issues.map((i) => `${i.path.join(".") || "front matter"}: ${i.message}`).join("; ")}`);
    workers.set(name, { name, role: "worker", prompt: acting(parsed.content.trim()), ...front.data });
  }
  return {
    teller: { name: "teller", role: "teller", description: "Talks to the user", prompt: acting(read("teller.md")) },
    planner: { name: "planner", role: "planner", description: "Plans and dispatches work", prompt: acting(read("planner.md")) },
    compaction: { name: "compaction", role: "compaction", description: "Summarises a session", prompt: read("compaction.md") },
    workers
  };
}
function safeList(dir) {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

// src/channel/channel.ts
var UndeliverableMessage = class extends Error {
  name = "UndeliverableMessage";
};
function channelOf(conversation) {
  return conversation.slice(0, conversation.indexOf(":"));
}
var FileTooLarge = class extends Error {
  constructor(maxBytes) {
    super(`the file is larger than ${maxBytes} bytes`);
    this.maxBytes = maxBytes;
  }
  maxBytes;
  name = "FileTooLarge";
};
function splitPlain(text, limit) {
  const parts = [];
  let rest = text.trim();
  while (rest.length > limit) {
    const window = rest.slice(0, limit);
    const cut = [window.lastIndexOf("\n\n"), window.lastIndexOf("\n"), window.lastIndexOf(" ")].find((at2) => at2 > limit / 2) ?? limit;
    parts.push(rest.slice(0, cut).trimEnd());
    rest = rest.slice(cut).trimStart();
  }
  if (rest) parts.push(rest);
  return parts;
}

// src/cluster/member-id.ts
import { createHash, randomBytes } from "node:crypto";
import { hostname } from "node:os";
var newMemberId = () => `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;
var connectionTag = (id) => `steward ${createHash("sha256").update(id).digest("hex").slice(0, 24)}`;

// src/cluster/node.ts
import { join as join3 } from "node:path";

// src/core/errors.ts
import { randomBytes as randomBytes2 } from "node:crypto";
function errorText(error) {
  return error instanceof Error ? error.message : String(error);
}
function incident(log, error, what, fields = {}) {
  const ref = `ref-${randomBytes2(4).toString("hex")}`;
  log.error({ ...fields, err: error, ref }, what);
  return ref;
}
function apology(ref, doing = "I could not answer that") {
  return `Sorry \u2014 ${doing} because of an error on my side. If it keeps happening, give the owner this reference: ${ref}.`;
}
function internalError(log, error, what, fields = {}) {
  return `an internal error (reference ${incident(log, error, what, fields)})`;
}

// src/cluster/leader-calls.ts
init_tool();

// src/cluster/queues.ts
import { createHash as createHash2 } from "node:crypto";
import PgBoss from "pg-boss";

// src/supervisor/task-records.ts
init_types();
init_request();

// src/store/ids.ts
import { monotonicFactory } from "ulid";
var pool = new Uint8Array(4096);
var drawn = pool.length;
function pooledRandom() {
  if (drawn === pool.length) {
    crypto.getRandomValues(pool);
    drawn = 0;
  }
  return pool[drawn++] / 256;
}
var newId = monotonicFactory(pooledRandom);

// src/supervisor/task-records.ts
function newTask(caller, origin, role, agent) {
  return {
    id: newId(),
    role,
    agent,
    type: "oneshot",
    prompt: "",
    priority: 5,
    timeout: null,
    status: "queued",
    conversation: caller.conversation,
    user: caller.user,
    parentSessionId: caller.sessionId,
    sessionId: newId(),
    origin,
    attempts: 0,
    createdAt: (/* @__PURE__ */ new Date()).toISOString()
  };
}
var MAX_TASK_ATTEMPTS = 2;
var CLUSTER_MAX_TASK_ATTEMPTS = 3;
var Interrupted = class extends Error {
  constructor(message, counts) {
    super(message);
    this.counts = counts;
  }
  counts;
  name = "Interrupted";
};
function sessionInUse(tasks2, sessionId) {
  for (const task of tasks2) if (task.sessionId === sessionId && !TERMINAL.has(task.status) || task.staged?.some((staged) => staged.sessionId === sessionId)) return true;
  return false;
}
var runOf = (task) => task.runs ?? task.attempts;
var TimedOut = class extends Error {
  name = "TimedOut";
};
var HandedOver = class extends Error {
  name = "HandedOver";
};
function interrupted(task, counts, limit = MAX_TASK_ATTEMPTS) {
  if (counts && task.attempts >= limit) return { ...task, status: "failed", error: `interrupted ${task.attempts} times by a restart`, endedAt: (/* @__PURE__ */ new Date()).toISOString() };
  return { ...task, status: "queued", attempts: counts ? task.attempts : task.attempts - 1 };
}
function resultsEventId(headTaskId) {
  return `results-${headTaskId}`;
}
function sessionOf(task) {
  return { id: task.sessionId, role: task.role, agent: task.agent, parentId: task.parentSessionId, conversation: task.conversation, user: task.user, createdAt: task.createdAt };
}
var QUIET_INSTRUCTION = `If there is nothing worth telling the user this time, answer exactly ${NO_REPORT} and nothing else.`;
function runTask(trigger, firing, sessionId, origin) {
  return {
    ...newTask({ conversation: trigger.target ?? trigger.conversation, user: trigger.user, sessionId }, origin, "worker", DEFAULT_WORKER),
    prompt: trigger.quiet ? `${trigger.prompt}

${QUIET_INSTRUCTION}` : trigger.prompt,
    timeout: trigger.timeout,
    firingId: firing.id,
    quiet: trigger.quiet || void 0
  };
}
function isQuietRun(task) {
  return task.quiet === true && task.firingId !== void 0 && task.status === "completed" && task.result?.trim() === NO_REPORT;
}

// src/cluster/queues.ts
var TASK_QUEUES = { planner: "steward-planner", worker: "steward-worker" };
var CALL_QUEUE = "steward-calls";
var WAIT_QUEUE = "steward-calls-waiting";
var MAX_EXPIRE_SECONDS = 24 * 3600 - 1;
function jobIdOf(taskId, run) {
  const hex = createHash2("sha1").update(`steward-task:${taskId}:${run}`).digest("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${(parseInt(hex[16], 16) & 3 | 8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
async function startBoss(url, leaseSeconds, log) {
  const boss = new PgBoss({ connectionString: url, max: 4, application_name: "steward-queue", schedule: false, supervise: true, maintenanceIntervalSeconds: Math.max(1, leaseSeconds) });
  boss.on("error", (error) => log.warn({ err: error }, "cluster: job queue error"));
  await boss.start();
  for (const name of [...Object.values(TASK_QUEUES), CALL_QUEUE, WAIT_QUEUE]) await createQueueOnce(boss, name);
  return boss;
}
async function createQueueOnce(boss, name, attempts = 5) {
  for (let attempt = 1; !await boss.getQueue(name); attempt++) {
    try {
      await boss.createQueue(name);
    } catch (error) {
      if (attempt >= attempts) throw error;
      await new Promise((resolve3) => setTimeout(resolve3, 50 * attempt + Math.random() * 50));
    }
  }
}
async function dispatchTask(boss, task, timeoutSeconds, leaseSeconds) {
  await boss.send(TASK_QUEUES[task.role], { taskId: task.id, run: runOf(task) }, {
    id: jobIdOf(task.id, runOf(task)),
    // pg-boss fetches higher priorities first, as the task queue does (0-10).
    priority: task.priority,
    // A lost run is retried by the leader as a new attempt (a new job), never by pg-boss.
    retryLimit: 0,
    // pg-boss refuses 24 h or more; the leader follows the claim, not the job's expiry.
    expireInSeconds: Math.min(MAX_EXPIRE_SECONDS, Math.max(1, Math.ceil(timeoutSeconds + leaseSeconds)))
  });
}
var Claimer = class {
  constructor(boss, queue, concurrency, handle, log, pollMs = 1e3) {
    this.boss = boss;
    this.queue = queue;
    this.concurrency = concurrency;
    this.handle = handle;
    this.log = log;
    this.pollMs = pollMs;
  }
  boss;
  queue;
  concurrency;
  handle;
  log;
  pollMs;
  active = 0;
  fetching = false;
  again = false;
  stopped = false;
  timer;
  inflight = /* @__PURE__ */ new Set();
  filling = Promise.resolve();
  start() {
    this.timer = setInterval(() => this.wake(), this.pollMs);
    this.timer.unref();
    this.wake();
  }
  wake() {
    if (this.stopped) return;
    if (this.fetching) {
      this.again = true;
      return;
    }
    this.filling = this.fill();
  }
  /** Takes nothing more; the jobs in hand go on. */
  pause() {
    this.stopped = true;
    clearInterval(this.timer);
  }
  /** Resolves once no job is in hand (after `pause`, once those in hand ended). */
  async drained() {
    await this.filling;
    await Promise.allSettled(this.inflight);
  }
  /** Takes nothing more; waits for a fetch under way (its jobs are handed over like any) and
   *  the jobs in hand. */
  async stop() {
    this.pause();
    await this.drained();
  }
  async fill() {
    this.fetching = true;
    try {
      while (!this.stopped && this.active < this.concurrency) {
        const jobs = await this.boss.fetch(this.queue, { batchSize: this.concurrency - this.active, priority: true });
        if (jobs.length === 0) break;
        for (const job of jobs) this.run(job);
      }
    } catch (error) {
      this.log.warn({ err: error, queue: this.queue }, "cluster: could not fetch jobs");
    } finally {
      this.fetching = false;
      if (this.again) {
        this.again = false;
        this.wake();
      }
    }
  }
  run(job) {
    this.active++;
    const done = this.handle(job).catch((error) => this.log.error({ err: error, queue: this.queue, job: job.id }, "cluster: a job's handler failed")).finally(() => {
      this.active--;
      this.inflight.delete(done);
      this.wake();
    });
    this.inflight.add(done);
  }
};

// src/cluster/leader-calls.ts
var CALL_CHANNEL = "steward_call";
var DONE_CHANNEL = "steward_call_done";
var SERVED_AT_ONCE = { [CALL_QUEUE]: 64, [WAIT_QUEUE]: 1e3 };
var LeaderCalls = class {
  constructor(boss, link, log) {
    this.boss = boss;
    this.link = link;
    this.log = log;
  }
  boss;
  link;
  log;
  waiters = /* @__PURE__ */ new Map();
  servers = [];
  stopping = new AbortController();
  /** Starts hearing that calls ended. */
  async start() {
    await this.link.listen(DONE_CHANNEL, (id) => this.waiters.get(id)?.());
  }
  /**
   * Calls `method` on the leader and waits for its result. `expireSeconds`: how long the leader
   * may take before the call counts as lost with it (and is tried again); `waitMs`: give up
   * waiting after this long and resolve `undefined` — the call stays queued and will be made.
   */
  async call(method, args, { expireSeconds = 60, waitMs, signal, waitsForUser = false } = {}) {
    const queue = waitsForUser ? WAIT_QUEUE : CALL_QUEUE;
    const id = await this.boss.send(queue, { method, args }, { retryLimit: 3, retryDelay: 1, expireInSeconds: expireSeconds });
    if (!id) throw new Error(`the call ${method} was not queued`);
    await this.link.notify(CALL_CHANNEL, method).catch(() => {
    });
    const deadline = waitMs === void 0 ? Infinity : Date.now() + waitMs;
    const wake = () => this.waiters.get(id)?.();
    signal?.addEventListener("abort", wake, { once: true });
    try {
      for (; ; ) {
        signal?.throwIfAborted();
        const woken = new Promise((resolve3) => {
          this.waiters.set(id, resolve3);
          setTimeout(resolve3, Math.min(1e3, Math.max(0, deadline - Date.now()))).unref();
        });
        const job = await this.boss.getJobById(queue, id, { includeArchive: true });
        if (job?.state === "completed") return answer(job.output);
        if (!job || job.state === "failed" || job.state === "cancelled") throw new Error(`the leader could not take the call ${method}`);
        if (Date.now() >= deadline) return void 0;
        await woken;
      }
    } finally {
      this.waiters.delete(id);
      signal?.removeEventListener("abort", wake);
    }
  }
  /** Aborted when this process stops serving: a handler waiting on the user (an approval) gives
   *  up its slot and the call goes back to the queue for the next leader. */
  get stopSignal() {
    return this.stopping.signal;
  }
  /** On the leader: takes calls and answers them with `handlers`. */
  async serve(handlers) {
    for (const queue of [CALL_QUEUE, WAIT_QUEUE]) {
      const orphans = await this.link.activeJobs(queue);
      if (orphans.length > 0) await this.boss.fail(queue, orphans);
    }
    this.servers = [CALL_QUEUE, WAIT_QUEUE].map((queue) => new Claimer(this.boss, queue, SERVED_AT_ONCE[queue], (job) => this.answer(queue, job, handlers), this.log));
    await this.link.listen(CALL_CHANNEL, () => this.servers.forEach((server) => server.wake()));
    for (const server of this.servers) server.start();
  }
  async stop() {
    this.stopping.abort(new Error("this process no longer serves leader calls"));
    await Promise.all(this.servers.map((server) => server.stop()));
  }
  async answer(queue, job, handlers) {
    const handler = handlers[job.data.method];
    let output;
    try {
      if (!handler) throw new Error(`no such call: ${job.data.method}`);
      output = { value: await handler(...job.data.args) };
    } catch (error) {
      if (this.stopping.signal.aborted) return void await this.boss.fail(queue, job.id).catch(() => {
      });
      output = { error: errorText(error), toolError: error instanceof ToolError };
    }
    await this.boss.complete(queue, job.id, output);
    await this.link.notify(DONE_CHANNEL, job.id).catch(() => {
    });
  }
};
function answer(output) {
  if (output?.error !== void 0) throw output.toolError ? new ToolError(output.error) : new Error(output.error);
  return output?.value;
}

// src/cluster/link.ts
import pg from "pg";
var LEADER_LOCK = 0x6c6561646572n;
var PROCESS_LOCKS = 1400141683;
var ClusterLink = class _ClusterLink {
  constructor(client, pool2) {
    this.client = client;
    this.pool = pool2;
    client.on("notification", (message) => {
      for (const handler of this.handlers.get(message.channel) ?? []) {
        try {
          handler(message.payload ?? "");
        } catch {
        }
      }
    });
  }
  client;
  pool;
  handlers = /* @__PURE__ */ new Map();
  closed = false;
  /** `onLost`: the connection broke — a leader has lost its lock and must stop leading. */
  static async connect(url, log, onLost) {
    const client = new pg.Client({ connectionString: url, application_name: "steward-cluster", keepAlive: true });
    const pool2 = new pg.Pool({ connectionString: url, max: 2, application_name: "steward-notify" });
    pool2.on("error", (error) => log.warn({ err: error }, "cluster: a notify connection failed"));
    await client.connect();
    const link = new _ClusterLink(client, pool2);
    client.on("error", (error) => {
      if (!link.closed) onLost(error);
    });
    client.on("end", () => {
      if (!link.closed) onLost(new Error("the cluster connection to Postgres ended"));
    });
    return link;
  }
  /** Takes the leader lock if no other process holds it. */
  async tryLead() {
    const { rows } = await this.client.query("SELECT pg_try_advisory_lock($1::bigint) AS locked", [LEADER_LOCK.toString()]);
    return rows[0].locked;
  }
  /** Whether this connection still holds the leader lock (a leader checks at every beat). */
  async holdsLead() {
    const { rows } = await this.client.query(
      "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'advisory' AND objsubid = 1 AND granted AND ((classid::int8 << 32) | objid::int8) = $1::int8) AS held",
      [LEADER_LOCK.toString()]
    );
    return rows[0].held;
  }
  /** Holds this process's own lock for as long as this connection lives: the moment the process
   *  dies, Postgres drops it, which `connected` sees. */
  async holdProcessLock(id) {
    await this.client.query("SELECT pg_advisory_lock($1, hashtext($2))", [PROCESS_LOCKS, id]);
  }
  /** Which of these processes are still connected: they hold their lock, or a connection of
   *  their store is still open — a process killed in the middle of a write is dead only once
   *  that write has landed or is gone (member-id.ts), never while it may still change a record
   *  the leader has decided about. */
  async connected(ids) {
    const { rows } = await this.pool.query(
      `SELECT id FROM unnest($2::text[], $3::text[]) AS p(id, tag) WHERE ((hashtext(id)::int8 & 4294967295)::oid) IN (
         SELECT objid FROM pg_locks WHERE locktype = 'advisory' AND classid = $1 AND objsubid = 2 AND granted
           AND database = (SELECT oid FROM pg_database WHERE datname = current_database()))
         OR tag IN (SELECT application_name FROM pg_stat_activity WHERE datname = current_database())`,
      [PROCESS_LOCKS, ids, ids.map(connectionTag)]
    );
    return new Set(rows.map((row) => row.id));
  }
  /** The ids of a pg-boss queue's jobs taken and not ended (its `job` table in the default
   *  `pgboss` schema; read only — changing them goes through pg-boss). */
  async activeJobs(queue) {
    const { rows } = await this.pool.query("SELECT id FROM pgboss.job WHERE name = $1 AND state = 'active'", [queue]);
    return rows.map((row) => row.id);
  }
  async listen(channel, handler) {
    const list2 = this.handlers.get(channel);
    if (list2) return void list2.push(handler);
    this.handlers.set(channel, [handler]);
    await this.client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
  }
  /** Tells every listening process (this one too); best effort — a lost notification is made up
   *  for by the listeners' own periodic checks. */
  async notify(channel, payload = "") {
    await this.pool.query("SELECT pg_notify($1, $2)", [channel, payload]);
  }
  async close() {
    this.closed = true;
    await Promise.allSettled([this.client.end(), this.pool.end()]);
  }
};

// src/cluster/membership.ts
import { hostname as hostname2 } from "node:os";
var DEAD_KEPT_LEASES = 40;
var Membership = class {
  constructor(deps) {
    this.deps = deps;
  }
  deps;
  leading = false;
  startedAt = (/* @__PURE__ */ new Date()).toISOString();
  running = /* @__PURE__ */ new Map();
  timer;
  beating = Promise.resolve();
  /** Per process, its last beat seen and when it was first seen here (see alive). */
  beats = /* @__PURE__ */ new Map();
  get id() {
    return this.deps.id;
  }
  get isLeader() {
    return this.leading;
  }
  /** Writes the first heartbeat and tries to lead; then beats on. */
  async start() {
    await this.deps.link.holdProcessLock(this.id);
    await this.beat();
    this.timer = setInterval(() => void this.beat(), Math.max(50, Math.floor(this.deps.leaseMs / 5)));
    this.timer.unref();
  }
  /** A run starts here: on record before it starts, so a death during it is seen. */
  async started(task, run) {
    this.running.set(`${task.id}:${run}`, { taskId: task.id, run, agent: task.agent, conversation: task.conversation });
    await this.write();
  }
  async ended(taskId, run) {
    this.running.delete(`${taskId}:${run}`);
    await this.write();
  }
  /** The ids of the processes connected and seen within the lease (this one always). */
  async alive() {
    const beating = (await this.silences()).filter(({ silent }) => silent < this.deps.leaseMs).map(({ id }) => id);
    const connected = await this.deps.link.connected(beating);
    return /* @__PURE__ */ new Set([this.id, ...beating.filter((id) => connected.has(id))]);
  }
  /** Every process on record and how long its beat has not changed. A beat is judged by when
   *  this process saw it change, on its own clock: another machine's clock may be off by more
   *  than a lease. */
  async silences() {
    const now2 = Date.now();
    const records = await this.deps.records.processes();
    for (const id of this.beats.keys()) if (!records.some((record) => record.id === id)) this.beats.delete(id);
    return records.map((record) => {
      const seen2 = this.beats.get(record.id);
      if (seen2?.seenAt === record.seenAt) return { id: record.id, silent: now2 - seen2.at };
      this.beats.set(record.id, { seenAt: record.seenAt, at: now2 });
      return { id: record.id, silent: 0 };
    });
  }
  /** Leaves the cluster: the record goes (the leader lock goes with the link). */
  async stop() {
    clearInterval(this.timer);
    await this.beating;
    await this.deps.records.removeProcess(this.id).catch((error) => this.deps.log.warn({ err: error }, "cluster: could not remove this process's record"));
  }
  beat() {
    this.beating = this.beating.then(async () => {
      try {
        if (!this.leading && await this.deps.link.tryLead()) {
          this.leading = true;
          this.deps.log.info({ process: this.id }, "cluster: this process leads");
          this.deps.onLeader();
        } else if (this.leading && !await this.deps.link.holdsLead()) {
          this.deps.onLost(new Error("the leader lock is no longer held"));
          return;
        }
        await this.write();
        if (this.leading) await this.forgetDead();
      } catch (error) {
        this.deps.log.warn({ err: error }, "cluster: heartbeat failed");
      }
    });
    return this.beating;
  }
  write() {
    const record = { id: this.id, host: hostname2(), pid: process.pid, startedAt: this.startedAt, seenAt: (/* @__PURE__ */ new Date()).toISOString(), leader: this.leading, running: [...this.running.values()] };
    return this.deps.records.saveProcess(record);
  }
  async forgetDead() {
    const silent = (await this.silences()).filter(({ silent: silent2 }) => silent2 >= DEAD_KEPT_LEASES * this.deps.leaseMs).map(({ id }) => id);
    if (silent.length === 0) return;
    const connected = await this.deps.link.connected(silent);
    for (const id of silent) if (!connected.has(id)) await this.deps.records.removeProcess(id);
  }
};

// src/store/collections.ts
init_types();
import { decodeTime } from "ulid";

// src/store/records.ts
function isBatchHead(task) {
  return !task.parentTaskId || task.type === "conditional";
}

// src/store/collections.ts
var put = (collection, record) => ({ collection: collection.name, id: collection.id(record), value: record, indexes: collection.entries(record) });
var remove = (collection, id) => ({ collection: collection.name, id, delete: true });
var ALL = "";
var at = (iso) => Date.parse(iso);
function define(name, id, indexes = {}) {
  const named = Object.entries(indexes);
  return { name, id, indexes: named.map(([index]) => index), entries: (record) => Object.fromEntries(named.map(([index, entry]) => [index, entry(record)])) };
}
var isLiveTask = (task) => !TERMINAL.has(task.status) || isBatchHead(task) && !task.reported;
var tasks = define("tasks", (task) => task.id, {
  live: (task) => isLiveTask(task) ? { group: ALL, at: at(task.createdAt) } : void 0,
  finished: (task) => TERMINAL.has(task.status) ? { group: task.conversation, at: at(task.endedAt ?? task.createdAt) } : void 0,
  origin: (task) => ({ group: task.origin, at: 0 })
});
var sessions = define("sessions", (session) => session.id);
var messages = define("messages", (message) => message.id, {
  session: (message) => ({ group: message.sessionId, at: decodeTime(message.id) })
});
var events = define("events", (event) => event.id, {
  all: (event) => ({ group: ALL, at: at(event.createdAt) })
});
var conversations = define("conversations", (conversation) => conversation.id);
var outbox = define("outbox", (record) => record.id, {
  unsent: (record) => record.status === "pending" ? { group: ALL, at: at(record.createdAt) } : void 0,
  origin: (record) => ({ group: record.origin, at: 0 }),
  firing: (record) => record.firingId !== void 0 ? { group: record.firingId, at: at(record.createdAt) } : void 0
});
var history = define("history", (line) => line.id, {
  conversation: (line) => ({ group: line.conversation, at: decodeTime(line.id) })
});
var questions = define("questions", (question) => question.id, {
  open: (question) => question.status === "open" ? { group: ALL, at: at(question.createdAt) } : void 0,
  origin: (question) => ({ group: question.origin, at: 0 })
});
var seen = define("seen", (record) => record.id, {
  time: (record) => ({ group: ALL, at: at(record.at) })
});
var seenMarks = define("seen_marks", (mark) => mark.stream);
var pairings = define("pairings", (pairing) => pairing.code);
var allowed = define("allowed", (record) => record.user);
var channelEntries = define("channel_state", (entry) => `${entry.channel}\0${entry.key}`, {
  // Listed in key order: equal `at`, so the id (channel, then key) orders them.
  channel: (entry) => ({ group: entry.channel, at: 0 })
});
var triggers = define("triggers", (trigger) => trigger.id, {
  // A trigger that ended while its last run goes on still needs the engine for that run.
  live: (trigger) => trigger.status === "active" || trigger.status === "paused" || trigger.runningFiringId !== void 0 ? { group: ALL, at: at(trigger.createdAt) } : void 0,
  origin: (trigger) => ({ group: trigger.origin, at: 0 })
});
var firings = define("firings", (firing) => firing.id, {
  trigger: (firing) => ({ group: firing.triggerId, at: at(firing.at) })
});
var raised = define("raised", (record) => record.id, {
  time: (record) => ({ group: ALL, at: decodeTime(record.id) })
});
var raisedNames = define("raised_names", (record) => record.name);
var usage = define("usage", (sample2) => sample2.id, {
  time: (sample2) => ({ group: ALL, at: at(sample2.at) })
});
var errors = define("errors", (record) => record.id, {
  time: (record) => ({ group: ALL, at: at(record.at) })
});
var controls = define("controls", (record) => record.id, {
  pending: (record) => record.status === "pending" ? { group: ALL, at: at(record.at) } : void 0
});
var profiles = define("profiles", (profile) => profile.user);
var claims = define("claims", (claim) => claim.id, {
  ended: (claim) => claim.endedAt ? { group: ALL, at: at(claim.endedAt) } : void 0
});
var processes = define("processes", (record) => record.id);
var meta = define("meta", (record) => record.id);
var SCHEMA = [
  tasks,
  sessions,
  messages,
  events,
  conversations,
  outbox,
  history,
  questions,
  seen,
  seenMarks,
  pairings,
  allowed,
  channelEntries,
  triggers,
  firings,
  raised,
  raisedNames,
  profiles,
  usage,
  errors,
  controls,
  claims,
  processes,
  meta
].map(({ name, indexes }) => ({ name, indexes }));

// src/store/cluster-records.ts
var claimId = (taskId, run) => `${taskId}:${run}`;
var ClusterRecords = class {
  constructor(backend) {
    this.backend = backend;
  }
  backend;
  async claim(id) {
    return await this.backend.get(claims.name, id);
  }
  saveClaim(claim) {
    return this.backend.write([put(claims, claim)]);
  }
  /** Drops the claims of runs that ended before `before` (ms): their task records hold the outcome. */
  async pruneClaims(before) {
    const old = await this.backend.list(claims.name, { index: "ended", group: "", to: before, limit: 1e3 });
    if (old.length > 0) await this.backend.write(old.map((claim) => remove(claims, claim.id)));
    return old.length;
  }
  async processes() {
    return (await this.backend.page(processes.name, { limit: 1e3 })).map((row) => row.value);
  }
  saveProcess(record) {
    return this.backend.write([put(processes, record)]);
  }
  removeProcess(id) {
    return this.backend.write([remove(processes, id)]);
  }
};

// src/supervisor/sessions.ts
var Session = class {
  constructor(info, records, store) {
    this.info = info;
    this.records = records;
    this.store = store;
  }
  info;
  records;
  store;
  async append(...entries) {
    const createdAt = (/* @__PURE__ */ new Date()).toISOString();
    const records = entries.map((entry) => ({ id: newId(), sessionId: this.info.id, createdAt, ...entry }));
    await this.store.save({ messages: records });
    this.records.push(...records);
  }
  has(eventId) {
    return this.records.some((record) => record.eventId === eventId);
  }
};
var IDLE_SESSIONS = 256;
var Sessions = class {
  constructor(store, idleLimit = IDLE_SESSIONS) {
    this.store = store;
    this.idleLimit = idleLimit;
  }
  store;
  idleLimit;
  /** In least-recently-used order, oldest first. */
  cache = /* @__PURE__ */ new Map();
  /** Sessions in use, with how many users each has: never evicted. */
  pins = /* @__PURE__ */ new Map();
  /** The session with this id, created from `info` if it does not exist yet; in use until
   *  `release`d (or `forget`ten). */
  open(info) {
    let session = this.cache.get(info.id);
    if (session) this.cache.delete(info.id);
    else {
      session = this.load(info);
      session.catch(() => {
        if (this.cache.get(info.id) === session) this.cache.delete(info.id);
      });
    }
    this.cache.set(info.id, session);
    this.pins.set(info.id, (this.pins.get(info.id) ?? 0) + 1);
    return session;
  }
  /** The caller is done with the session for now: it may be evicted once idle long enough. */
  release(id) {
    const pins = (this.pins.get(id) ?? 1) - 1;
    if (pins > 0) this.pins.set(id, pins);
    else this.pins.delete(id);
    this.evict();
  }
  /** A session whose record the caller writes in its own save (with the task or conversation
   *  that introduces it): nothing to read, nothing more to write. */
  adopt(info) {
    this.cache.delete(info.id);
    this.cache.set(info.id, Promise.resolve(new Session(info, [], this.store)));
    this.evict();
  }
  async exists(id) {
    return (await this.cache.get(id))?.info ?? await this.store.session(id);
  }
  forget(id) {
    this.cache.delete(id);
    this.pins.delete(id);
  }
  /** Sessions in memory (for tests and the soak benchmark). */
  get size() {
    return this.cache.size;
  }
  evict() {
    if (this.cache.size <= this.idleLimit + this.pins.size) return;
    for (const id of this.cache.keys()) {
      if (this.cache.size <= this.idleLimit + this.pins.size) return;
      if (!this.pins.has(id)) this.cache.delete(id);
    }
  }
  async load(info) {
    const stored = await this.store.session(info.id);
    if (!stored) await this.store.save({ sessions: [info] });
    return new Session(stored ?? info, stored ? await this.store.messages(info.id) : [], this.store);
  }
};

// src/cluster/task-host.ts
var CLAIMS_CHANNEL = "steward_claims";
var PROGRESS_CHANNEL = "steward_progress";
var CANCEL_CHANNEL = "steward_cancel";
var MAX_PAYLOAD = 7900;
var END_WRITE_ATTEMPTS = 12;
var Stopping = class extends Error {
};
var TaskHost = class {
  constructor(deps) {
    this.deps = deps;
    this.sessions = new Sessions(deps.store);
  }
  deps;
  runs = /* @__PURE__ */ new Map();
  sessions;
  stopped = false;
  /** Handles one claimed job of `queue` and completes it. */
  async handle(queue, job) {
    try {
      await this.runClaimed(job.data);
    } finally {
      await this.deps.boss.complete(queue, job.id).catch((error) => this.deps.log.warn({ err: error, job: job.id }, "cluster: could not complete a task job"));
    }
  }
  /** The leader cancelled a run (`/stop`, cancel_task, its timeout). */
  cancel(id, reason) {
    this.runs.get(id)?.abort(new Error(reason));
  }
  /** Cuts every run short: their claims are released, so the leader queues them again without
   *  counting the attempt. */
  stop() {
    this.stopped = true;
    for (const controller of this.runs.values()) controller.abort(new Stopping("Steward is stopping"));
  }
  async runClaimed({ taskId, run }) {
    const { store, membership, log } = this.deps;
    const id = claimId(taskId, run);
    if (await store.cluster.claim(id)) return;
    const task = await store.task(taskId);
    if (task?.status !== "running" || runOf(task) !== run) return;
    const claim = { id, taskId, run, holder: membership.id, startedAt: (/* @__PURE__ */ new Date()).toISOString(), status: "running" };
    await store.cluster.saveClaim(claim);
    const controller = new AbortController();
    this.runs.set(id, controller);
    if (this.stopped) controller.abort(new Stopping("Steward is stopping"));
    const seconds = task.timeout ?? this.deps.config.timeouts[task.role];
    const timer = setTimeout(() => controller.abort(new TimedOut(`timed out after ${seconds} s`)), seconds * 1e3);
    let end;
    try {
      controller.signal.throwIfAborted();
      await membership.started(task, run);
      if (!membership.isLeader) await this.deps.refresh();
      const session = await this.sessions.open(sessionOf(task));
      const outcome = await this.deps.runner().runTask(task, session, controller.signal, (summary) => this.progress(taskId, summary));
      end = { status: "done", result: outcome.status === "done" ? outcome.text : "" };
    } catch (error) {
      const reason = controller.signal.reason;
      end = reason instanceof Stopping ? { status: "released" } : { status: "failed", error: errorText(controller.signal.aborted ? reason : error), timedOut: reason instanceof TimedOut || void 0 };
    } finally {
      clearTimeout(timer);
      this.runs.delete(id);
      this.sessions.forget(task.sessionId);
    }
    await this.recordEnd({ ...claim, ...end, endedAt: (/* @__PURE__ */ new Date()).toISOString() });
    await membership.ended(taskId, run).catch((error) => log.warn({ err: error }, "cluster: could not update this process's record"));
    await this.deps.link.notify(CLAIMS_CHANNEL, id).catch((error) => log.warn({ err: error }, "cluster: could not announce a run's end"));
  }
  /** The run's end is what the leader waits for: a failed write is tried again (a database
   *  blip), for as long as the task's timeout would let the leader wait anyway. */
  async recordEnd(claim) {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.deps.store.cluster.saveClaim(claim);
      } catch (error) {
        if (attempt >= END_WRITE_ATTEMPTS) throw error;
        this.deps.log.warn({ err: error, claim: claim.id, attempt }, "cluster: could not record a run's end; trying again");
        await new Promise((resolve3) => setTimeout(resolve3, Math.min(1e4, 200 * 2 ** attempt)));
      }
    }
  }
  progress(taskId, summary) {
    const payload = JSON.stringify({ taskId, summary });
    if (payload.length > MAX_PAYLOAD) return;
    this.deps.link.notify(PROGRESS_CHANNEL, payload).catch(() => {
    });
  }
};

// src/cluster/remote-runs.ts
var CLAIMS_KEPT_MS = 36e5;
var LIVENESS_TICK_MS = 500;
var RemoteRuns = class {
  constructor(deps) {
    this.deps = deps;
  }
  deps;
  waiting = /* @__PURE__ */ new Map();
  timer;
  sweeping = false;
  lastSweep = 0;
  lastAlive = /* @__PURE__ */ new Set();
  /** Starts following claims, progress and lost runs (once this process leads). */
  async start() {
    const { link } = this.deps;
    await link.listen(CLAIMS_CHANNEL, (id) => void this.check(id).catch((error) => this.deps.log.warn({ err: error }, "cluster: could not read a run's claim")));
    await link.listen(PROGRESS_CHANNEL, (payload) => this.progress(payload));
    this.timer = setInterval(() => void this.tick(), Math.min(LIVENESS_TICK_MS, this.deps.config.cluster.leaseSeconds * 500));
    this.timer.unref();
  }
  stop() {
    clearInterval(this.timer);
  }
  run = (task, signal, onTool) => {
    const id = claimId(task.id, runOf(task));
    const outcome = new Promise((resolve3, reject) => this.waiting.set(id, { task, sentAt: Date.now(), resolve: resolve3, reject, onTool }));
    const aborted = () => {
      if (!this.waiting.has(id)) return;
      if (this.deps.stopping()) return this.finish(id, (waiter) => waiter.reject(new HandedOver("left to the next leader")));
      void this.deps.link.notify(CANCEL_CHANNEL, JSON.stringify({ id, reason: errorText(signal.reason) })).catch(() => {
      });
      this.finish(id, (waiter) => waiter.reject(signal.reason));
    };
    if (signal.aborted) {
      aborted();
      return outcome;
    }
    signal.addEventListener("abort", aborted, { once: true });
    void this.dispatch(id, task);
    return outcome;
  };
  /** Queues the run. Only a failed send interrupts it (the board queues it again, counted, so a
   *  database that stays down fails the task in the end); the wake-up and the first look are
   *  made up for by the sweep. */
  async dispatch(id, task) {
    try {
      await dispatchTask(this.deps.boss, task, this.timeoutOf(task), this.deps.config.cluster.leaseSeconds);
    } catch (error) {
      return this.finish(id, (waiter) => waiter.reject(new Interrupted(`it could not be queued: ${errorText(error)}`, true)));
    }
    await this.deps.link.notify("steward_work", task.role).catch((error) => this.deps.log.warn({ err: error }, "cluster: could not announce a queued task"));
    await this.check(id).catch((error) => this.deps.log.warn({ err: error }, "cluster: could not read a run's claim"));
  }
  timeoutOf(task) {
    return task.timeout ?? this.deps.config.timeouts[task.role];
  }
  async check(id) {
    if (this.waiting.has(id)) this.settle(id, await this.deps.store.cluster.claim(id));
  }
  /** Ends the wait for a run whose claim has ended. */
  settle(id, claim) {
    if (claim?.status === "done") this.finish(id, (waiter) => waiter.resolve({ status: "done", text: claim.result ?? "" }));
    else if (claim?.status === "failed") this.finish(id, (waiter) => waiter.reject(new (claim.timedOut ? TimedOut : Error)(claim.error ?? "the run failed")));
    else if (claim?.status === "released") this.finish(id, (waiter) => waiter.reject(new Interrupted("the process running it stopped", false)));
  }
  /** Looks at every run waited for when a process has died since the last look, and every half
   *  lease anyway (a job never claimed, a notification missed). */
  async tick() {
    if (this.sweeping) return;
    this.sweeping = true;
    try {
      const alive = await this.deps.membership.alive();
      const died = [...this.lastAlive].some((id) => !alive.has(id));
      this.lastAlive = alive;
      if (died || Date.now() - this.lastSweep >= this.deps.config.cluster.leaseSeconds * 500) await this.sweep();
    } catch (error) {
      this.deps.log.warn({ err: error }, "cluster: could not check the runs under way");
    } finally {
      this.sweeping = false;
    }
  }
  /** Every waiter whose run is lost is interrupted; missed notifications are made up for. */
  async sweep() {
    this.lastSweep = Date.now();
    const leaseMs = this.deps.config.cluster.leaseSeconds * 1e3;
    const claims2 = /* @__PURE__ */ new Map();
    for (const id of [...this.waiting.keys()]) claims2.set(id, await this.deps.store.cluster.claim(id));
    const alive = await this.deps.membership.alive();
    for (const [id, claim] of claims2) {
      const waiter = this.waiting.get(id);
      if (!waiter) continue;
      if (claim && claim.status !== "running") this.settle(id, claim);
      else if (claim && !alive.has(claim.holder)) await this.lose(id, claim, `the process running it (${claim.holder}) died`);
      else if (claim && Date.now() - Date.parse(claim.startedAt) > this.timeoutOf(waiter.task) * 1e3 + 2 * leaseMs) this.finish(id, (w) => w.reject(new TimedOut(`timed out after ${this.timeoutOf(waiter.task)} s`)));
      else if (!claim && Date.now() - waiter.sentAt > leaseMs && await this.lostJob(waiter.task, leaseMs)) this.finish(id, (w) => w.reject(new Interrupted("its job was taken but never started", true)));
    }
    await this.deps.store.cluster.pruneClaims(Date.now() - CLAIMS_KEPT_MS);
  }
  /** A run whose holder died: closed (so it is pruned like any ended claim; a holder that was
   *  alive after all is told to stop) and interrupted, which queues the task again. */
  async lose(id, claim, why) {
    await this.deps.store.cluster.saveClaim({ ...claim, status: "failed", error: why, endedAt: (/* @__PURE__ */ new Date()).toISOString() });
    await this.deps.link.notify(CANCEL_CHANNEL, JSON.stringify({ id, reason: why })).catch(() => {
    });
    this.finish(id, (waiter) => waiter.reject(new Interrupted(why, true)));
  }
  /** A job taken (active) for longer than the lease without a claim: its taker died before it
   *  wrote one. A job gone or ended without a claim is lost too. */
  async lostJob(task, leaseMs) {
    const job = await this.deps.boss.getJobById(TASK_QUEUES[task.role], jobIdOf(task.id, runOf(task)));
    if (!job) return true;
    if (job.state === "created" || job.state === "retry") return false;
    if (job.state === "active") return job.startedOn !== null && Date.now() - new Date(job.startedOn).getTime() > leaseMs;
    return await this.deps.store.cluster.claim(claimId(task.id, runOf(task))) === void 0;
  }
  progress(payload) {
    try {
      const { taskId, summary } = JSON.parse(payload);
      for (const waiter of this.waiting.values()) if (waiter.task.id === taskId) waiter.onTool(summary);
    } catch {
    }
  }
  finish(id, settle) {
    const waiter = this.waiting.get(id);
    if (!waiter) return;
    this.waiting.delete(id);
    settle(waiter);
  }
};

// src/cluster/routed.ts
import { mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join as join2 } from "node:path";
import { randomBytes as randomBytes3 } from "node:crypto";

// src/tool/capabilities.ts
var AWAIT_ANSWER = /* @__PURE__ */ Symbol("await answer");

// src/cluster/routed.ts
var APPROVAL_EXPIRE_SECONDS = 700;
var plain = ({ role, agent, conversation, user, sessionId, callId, fresh, taskId, askedAt }) => ({ role, agent, conversation, user, sessionId, callId, fresh, taskId, askedAt });
var AWAITING = { awaiting: true };
function routedCapabilities(local, calls2, leads) {
  const via = async (here, method, args, signal, waiting) => leads() ? here() : await calls2.call(method, args, { ...waiting, signal });
  return {
    ...local,
    tasks: {
      delegate: (caller, request) => via(() => local.tasks.delegate(caller, request), "delegate", [plain(caller), request], caller.abort),
      listTasks: (caller, filter) => via(() => local.tasks.listTasks(caller, filter), "listTasks", [plain(caller), filter], caller.abort),
      cancelTask: (caller, taskId) => via(() => local.tasks.cancelTask(caller, taskId), "cancelTask", [plain(caller), taskId], caller.abort)
    },
    schedules: { schedule: (caller, request) => via(() => local.schedules.schedule(caller, request), "schedule", [plain(caller), request], caller.abort) },
    questions: {
      ask: async (caller, question) => {
        if (leads()) return local.questions.ask(caller, question);
        const answer2 = await calls2.call("ask", [plain(caller), question], { signal: caller.abort, waitsForUser: true });
        return !answer2 || "awaiting" in answer2 ? AWAIT_ANSWER : answer2;
      },
      approve: (caller, tool2, pattern) => via(() => local.questions.approve(caller, tool2, pattern), "approve", [plain(caller), tool2, pattern], caller.abort, { expireSeconds: APPROVAL_EXPIRE_SECONDS, waitsForUser: true }),
      inquire: (caller, key, question) => via(() => local.questions.inquire(caller, key, question), "inquire", [plain(caller), key, question], caller.abort, { expireSeconds: question.timeout + APPROVAL_EXPIRE_SECONDS, waitsForUser: true })
    },
    replies: {
      reply: (caller, text) => via(() => local.replies.reply(caller, text), "reply", [plain(caller), text], caller.abort),
      sendFile: (caller, file, caption) => via(() => local.replies.sendFile(caller, file, caption), "sendFile", [plain(caller), file, caption], caller.abort)
    }
  };
}
function leaderHandlers(local, take, raise, stop) {
  const revive = (caller) => ({ ...caller, abort: stop });
  return {
    delegate: (caller, request) => local.tasks.delegate(revive(caller), request),
    listTasks: (caller, filter) => local.tasks.listTasks(revive(caller), filter),
    cancelTask: (caller, taskId) => local.tasks.cancelTask(revive(caller), taskId),
    schedule: (caller, request) => local.schedules.schedule(revive(caller), request),
    ask: async (caller, question) => {
      const answer2 = await local.questions.ask(revive(caller), question);
      return answer2 === AWAIT_ANSWER ? AWAITING : answer2;
    },
    approve: (caller, tool2, pattern) => local.questions.approve(revive(caller), tool2, pattern),
    inquire: (caller, key, question) => local.questions.inquire(revive(caller), key, question),
    reply: (caller, text) => local.replies.reply(revive(caller), text),
    sendFile: (caller, file, caption) => local.replies.sendFile(revive(caller), file, caption),
    inbound: async (packed) => {
      try {
        return await take(unpackInbound(packed)) ?? {};
      } finally {
        await Promise.all((packed.attachments ?? []).map((attachment) => attachment.file && rm(attachment.file, { force: true })));
      }
    },
    raise: (name) => raise(name)
  };
}
async function packInbound(message, dir, maxBytes) {
  if (!message.attachments?.length) return { ...message, attachments: void 0 };
  await mkdir(dir, { recursive: true });
  const attachments = await Promise.all(
    message.attachments.map(async ({ download, ...attachment }) => {
      try {
        const file = join2(dir, randomBytes3(8).toString("hex"));
        await writeFile(file, await download(maxBytes));
        return { ...attachment, file };
      } catch (error) {
        return error instanceof FileTooLarge ? { ...attachment, tooLarge: error.maxBytes } : { ...attachment, error: errorText(error) };
      }
    })
  );
  return { ...message, attachments };
}
function unpackInbound(packed) {
  return {
    ...packed,
    attachments: packed.attachments?.map(({ file, tooLarge, error, ...attachment }) => ({
      ...attachment,
      download: async (maxBytes) => {
        if (tooLarge !== void 0) throw new FileTooLarge(Math.min(tooLarge, maxBytes));
        if (!file) throw new Error(error ?? "the file could not be downloaded");
        if ((await stat(file)).size > maxBytes) throw new FileTooLarge(maxBytes);
        return readFile(file);
      }
    }))
  };
}

// src/cluster/node.ts
var WORK_CHANNEL = "steward_work";
var INBOUND_WAIT_MS = 2e3;
var ClusterNode = class _ClusterNode {
  constructor(config, store, log, link, boss, membership, calls2, remote, onFatal) {
    this.config = config;
    this.store = store;
    this.log = log;
    this.link = link;
    this.boss = boss;
    this.membership = membership;
    this.calls = calls2;
    this.remote = remote;
    this.onFatal = onFatal;
  }
  config;
  store;
  log;
  link;
  boss;
  membership;
  calls;
  remote;
  onFatal;
  supervisor;
  host;
  claimers = [];
  /** This process leads and its Supervisor has started: the leader's parts are used here. */
  ready = false;
  stopping = false;
  /** `id`: this process's (newMemberId), the one its store's connections are tagged with. */
  static async join(config, store, url, id, log, onFatal) {
    const leaseMs = config.cluster.leaseSeconds * 1e3;
    let node;
    const link = await ClusterLink.connect(url, log, (error) => node?.lost(error));
    const boss = await startBoss(url, config.cluster.leaseSeconds, log);
    const membership = new Membership({ id, records: store.cluster, link, leaseMs, log, onLeader: () => node?.lead(), onLost: (error) => node?.lost(error) });
    const calls2 = new LeaderCalls(boss, link, log);
    await calls2.start();
    const remote = new RemoteRuns({ store, boss, link, membership, config, log, stopping: () => node?.stopping ?? false });
    node = new _ClusterNode(config, store, log, link, boss, membership, calls2, remote, onFatal);
    return node;
  }
  /** The task board's `run`: tasks go to whichever process claims them. */
  get runTask() {
    return this.remote.run;
  }
  get leads() {
    return this.membership.isLeader;
  }
  /** Starts claiming tasks and beating. Once this process leads, `beforeLeading` runs before its
   *  Supervisor starts (what a stopped leader left shown is cleared) and `onLeader` after (the
   *  channels only a leader runs start there). */
  async start(supervisor, hooks) {
    this.supervisor = supervisor;
    this.hooks = hooks;
    const runner = supervisor.runner(routedCapabilities(supervisor.capabilities, this.calls, () => this.ready));
    const host = new TaskHost({ store: this.store, boss: this.boss, link: this.link, membership: this.membership, config: this.config, log: this.log, runner: () => runner, refresh: () => supervisor.profiles.load() });
    this.host = host;
    await this.link.listen(CANCEL_CHANNEL, (payload) => {
      const { id, reason } = JSON.parse(payload);
      host.cancel(id, String(reason));
    });
    this.claimers = Object.values(TASK_QUEUES).map((queue) => new Claimer(this.boss, queue, this.config.workerConcurrency, (job) => host.handle(queue, job), this.log));
    await this.link.listen(WORK_CHANNEL, () => this.claimers.forEach((claimer) => claimer.wake()));
    await supervisor.profiles.load();
    await this.membership.start();
    for (const claimer of this.claimers) claimer.start();
  }
  /** An inbound message that reached this process: the Supervisor's gate takes it here when
   *  this process leads, else the leader does. */
  async take(message) {
    if (this.ready) return this.supervisor.gate.take(message);
    const packed = await packInbound(message, join3(this.config.dataDir, "inbound"), this.config.attachments.maxBytes);
    return this.calls.call("inbound", [packed], { waitMs: INBOUND_WAIT_MS });
  }
  /** A hook's event, raised by the leader's scheduler. */
  async raise(name) {
    if (this.ready) return this.supervisor.scheduler.raise(name);
    await this.calls.call("raise", [name], { waitMs: INBOUND_WAIT_MS });
  }
  /** A graceful stop begins: no more tasks are claimed here; those in hand go on. */
  stopClaiming() {
    for (const claimer of this.claimers) claimer.pause();
  }
  /** Resolves once the tasks this process runs have ended (after stopClaiming). */
  async idle() {
    await Promise.all(this.claimers.map((claimer) => claimer.drained()));
  }
  /** Claims nothing more and hands the runs in hand back (released: the next run of each does
   *  not count as an attempt). From now on a task the Supervisor stops following is left to the
   *  next leader. Then the app stops the Supervisor, then `stop()`. */
  async stopWork() {
    this.stopping = true;
    this.ready = false;
    this.host?.stop();
    await this.calls.stop();
    await Promise.all(this.claimers.map((claimer) => claimer.stop()));
  }
  /** Leaves the cluster, giving up the leader lock: only once the Supervisor has stopped. */
  async stop() {
    await this.stopWork();
    this.remote.stop();
    await this.membership.stop();
    await this.boss.stop({ graceful: false, wait: true }).catch((error) => this.log.warn({ err: error }, "cluster: could not stop the job queue"));
    await this.link.close();
  }
  hooks = { beforeLeading: async () => {
  }, onLeader: async () => {
  } };
  lead() {
    const supervisor = this.supervisor;
    const leading = (async () => {
      await this.remote.start();
      await this.hooks.beforeLeading();
      await supervisor.start();
      await this.calls.serve(leaderHandlers(supervisor.capabilities, (message) => supervisor.gate.take(message), (name) => supervisor.scheduler.raise(name), this.calls.stopSignal));
      this.ready = true;
      await this.hooks.onLeader();
    })();
    leading.catch((error) => this.onFatal(new Error(`could not take up leading: ${errorText(error)}`)));
  }
  lost(error) {
    if (this.stopping) return;
    this.log.error({ err: error }, "cluster: lost the connection that holds the leader lock");
    this.onFatal(error);
  }
};

// src/app.ts
init_config();
import { ZodError as ZodError2 } from "zod";

// src/config/ports.ts
init_config();
function portError(variable, port2, error, host) {
  const hostVariable = variable.replace(/_PORT$/, "_HOST");
  switch (error?.code) {
    case "EADDRNOTAVAIL":
    case "EAFNOSUPPORT":
      return new ConfigError(hostVariable, `${hostVariable} ${host ?? ""} is not an address of this machine; use 127.0.0.1, 0.0.0.0 (every interface) or one of its own addresses`);
    case "ENOTFOUND":
      return new ConfigError(hostVariable, `${hostVariable} ${host ?? ""} is not a known host name; use 127.0.0.1, 0.0.0.0 (every interface) or one of this machine's addresses`);
    case "EADDRINUSE":
      return new ConfigError(variable, `${variable} ${port2} is in use`);
    case "EACCES":
      return new ConfigError(variable, `${variable} ${port2} may not be used by this user (ports below 1024 need privileges)`);
    default:
      return error;
  }
}

// src/model/model.ts
import { wrapLanguageModel } from "ai";
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
var cache = /* @__PURE__ */ new WeakMap();
function fetchWithTimeout(timeoutMs, base = fetch) {
  return (input, init) => {
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(Object.assign(new Error(`the model did not answer within ${timeoutMs / 1e3} s`), { code: "ETIMEDOUT" })), timeoutMs);
    timer.unref();
    const signal = init?.signal ? AbortSignal.any([init.signal, deadline.signal]) : deadline.signal;
    return base(input, { ...init, signal });
  };
}
function providersOf(config) {
  let providers = cache.get(config);
  if (!providers) {
    providers = { fetch: fetchWithTimeout(config.modelTimeoutMs) };
    cache.set(config, providers);
  }
  return providers;
}
function resolveModel(spec, config) {
  const providers = providersOf(config);
  switch (spec.provider) {
    case "openai":
      providers.openai ??= createOpenAI({ ...config.providers.openai, fetch: providers.fetch });
      return providers.openai.chat(spec.id);
    case "anthropic":
      providers.anthropic ??= createAnthropic({ ...config.providers.anthropic, fetch: providers.fetch });
      return providers.anthropic(spec.id);
    case "openai-compatible": {
      const { baseURL, apiKey } = config.providers.openaiCompatible;
      if (baseURL === void 0) throw new Error(`${spec.variable} uses openai-compatible but OPENAI_COMPATIBLE_BASE_URL is not set`);
      providers.compatible ??= createOpenAICompatible({ name: "openai-compatible", baseURL, apiKey, includeUsage: true, fetch: providers.fetch });
      return providers.compatible.chatModel(spec.id);
    }
  }
}
function countedModel(model, role, sink) {
  if (typeof model === "string" || model.specificationVersion !== "v3") return model;
  const counting = {
    specificationVersion: "v3",
    async wrapGenerate({ doGenerate }) {
      try {
        const result2 = await doGenerate();
        const { inputTokens, outputTokens } = result2.usage;
        sink.modelCall(role, "ok", { input: inputTokens.total, cachedInput: inputTokens.cacheRead, output: outputTokens.total });
        return result2;
      } catch (error) {
        sink.modelCall(role, "error");
        throw error;
      }
    },
    async wrapStream({ doStream }) {
      try {
        const result2 = await doStream();
        const counted2 = new TransformStream({
          transform(part, controller) {
            if (part.type === "finish") sink.modelCall(role, "ok", { input: part.usage.inputTokens.total, cachedInput: part.usage.inputTokens.cacheRead, output: part.usage.outputTokens.total });
            if (part.type === "error") sink.modelCall(role, "error");
            controller.enqueue(part);
          }
        });
        return { ...result2, stream: result2.stream.pipeThrough(counted2) };
      } catch (error) {
        sink.modelCall(role, "error");
        throw error;
      }
    }
  };
  return wrapLanguageModel({ model, middleware: counting });
}
function resolveTranscriptionModel(spec, config) {
  const providers = providersOf(config);
  if (spec.provider === "openai") {
    providers.openai ??= createOpenAI({ ...config.providers.openai, fetch: providers.fetch });
    return providers.openai.transcription(spec.id);
  }
  const { baseURL, apiKey } = config.providers.openaiCompatible;
  if (spec.provider !== "openai-compatible" || baseURL === void 0) throw new Error(`${spec.variable}: ${spec.provider} has no transcription model here`);
  providers.compatibleAudio ??= createOpenAI({ baseURL, apiKey: apiKey ?? "none", fetch: providers.fetch });
  return providers.compatibleAudio.transcription(spec.id);
}

// src/app.ts
init_roles();

// src/store/migrations.ts
var NewerDataError = class extends Error {
  name = "NewerDataError";
  constructor(found, known) {
    super(`the data folder was written by a newer Steward (schema version ${found}; this one knows up to ${known}). Run that version, or restore a backup made for this one.`);
  }
};
var LEGACY_PAGE = 500;
var collectionsFromKeyv = {
  version: 1,
  description: "keyv key prefixes \u2192 collections with indexes",
  async up(backend) {
    if (!("legacyPage" in backend)) return;
    const legacy = backend;
    const latest = /* @__PURE__ */ new Map();
    for (let after = 0; ; ) {
      const rows = await legacy.legacyPage(after, LEGACY_PAGE);
      if (rows.length === 0) break;
      const ops = [];
      for (const { key, value } of rows) {
        const op = legacyOp(key, value);
        if (op) ops.push(op);
        if (key.startsWith("raised/")) {
          const record = value;
          const known = latest.get(record.name);
          if (!known || Date.parse(known.at) <= Date.parse(record.at)) latest.set(record.name, { name: record.name, at: record.at, id: record.id });
        }
      }
      await backend.write(ops);
      after = rows.at(-1).rowid;
    }
    await backend.write([...latest.values()].map((record) => put(raisedNames, record)));
    await legacy.clearLegacy();
  }
};
var MIGRATIONS = [collectionsFromKeyv];
var SCHEMA_VERSION = MIGRATIONS.at(-1).version;
async function migrate(backend, migrations = MIGRATIONS) {
  const known = migrations.at(-1)?.version ?? 0;
  const found = (await backend.get(meta.name, "schema"))?.version ?? 0;
  if (found > known) throw new NewerDataError(found, known);
  for (const migration of migrations) {
    if (migration.version <= found) continue;
    await migration.up(backend);
    await backend.write([put(meta, { id: "schema", version: migration.version })]);
  }
}
function legacyOp(key, value) {
  const prefix = key.slice(0, key.indexOf("/"));
  const rest = key.slice(prefix.length + 1);
  const as = (collection, record) => put(collection, record);
  switch (prefix) {
    case "task":
      return as(tasks, value);
    case "session":
      return as(sessions, value);
    case "msg":
      return as(messages, value);
    case "event":
      return as(events, value);
    case "conv":
      return as(conversations, value);
    case "outbox":
      return as(outbox, value);
    case "hist":
      return as(history, value);
    case "question":
      return as(questions, value);
    case "seen":
      return as(seen, { id: rest, at: new Date(value.at).toISOString() });
    case "pairing":
      return as(pairings, value);
    case "allow":
      return as(allowed, value);
    case "chan": {
      const slash = rest.indexOf("/");
      const entry = value;
      return as(channelEntries, { channel: decodeURIComponent(rest.slice(0, slash)), key: entry.key, value: entry.value });
    }
    case "trigger":
      return as(triggers, value);
    case "firing":
      return as(firings, value);
    case "raised":
      return as(raised, value);
    default:
      return void 0;
  }
}

// src/store/store.ts
init_sqlite();

// src/store/reads.ts
var PAGE = 1e3;
var BackendReads = class {
  constructor(backend) {
    this.backend = backend;
  }
  backend;
  async get(collection, id) {
    return await this.backend.get(collection.name, id);
  }
  async index(collection, query) {
    return await this.backend.list(collection.name, query);
  }
  /** Every record of the collection, in id order, read a page at a time. */
  async readAll(collection) {
    const records = [];
    for (let after; ; ) {
      const rows = await this.backend.page(collection.name, { after, limit: PAGE });
      records.push(...rows.map((row) => row.value));
      if (rows.length < PAGE) return records;
      after = rows.at(-1).id;
    }
  }
};

// src/store/history-records.ts
import { decodeTime as decodeTime2 } from "ulid";
var HistoryRecords = class extends BackendReads {
  async recent(conversation, count, offset) {
    const lines = await this.index(history, { index: "conversation", group: conversation, desc: true, limit: Math.max(0, count), offset: Math.max(0, offset) });
    return lines.reverse().map(toMessage);
  }
  async between(conversation, after, before) {
    const lines = await this.index(history, { index: "conversation", group: conversation, from: after.getTime(), to: before.getTime() });
    return lines.map(toMessage);
  }
};
function toMessage(line) {
  return { role: line.role, text: line.text, createdAt: new Date(decodeTime2(line.id)).toISOString() };
}

// src/store/outbox-records.ts
var OutboxRecords = class extends BackendReads {
  /** Every outbox record, oldest first (tests; the Outbox loads the unsent ones). */
  all() {
    return this.readAll(outbox);
  }
  /** Records still to send, oldest first. */
  unsent() {
    return this.index(outbox, { index: "unsent", group: "" });
  }
  record(id) {
    return this.get(outbox, id);
  }
  async byOrigin(origin) {
    return (await this.index(outbox, { index: "origin", group: origin, limit: 1 }))[0];
  }
  /** The report of a firing, if one was written. */
  async ofFiring(firingId) {
    return (await this.index(outbox, { index: "firing", group: firingId, limit: 1 }))[0];
  }
};

// src/store/owner-records.ts
var ERRORS_KEPT = 50;
var OwnerRecords = class extends BackendReads {
  recordUsage(sample2) {
    return this.backend.write([put(usage, { ...sample2, id: newId() })]);
  }
  /** Usage samples taken at or after `since` (ms), oldest first. */
  usageSince(since) {
    return this.index(usage, { index: "time", group: "", from: since });
  }
  /** Keeps an error for `steward status`; only the latest ERRORS_KEPT stay. */
  async recordError(error) {
    await this.backend.write([put(errors, { id: newId(), ...error })]);
    const older = await this.index(errors, { index: "time", group: "", desc: true, offset: ERRORS_KEPT });
    if (older.length > 0) await this.backend.write(older.map((record) => remove(errors, record.id)));
  }
  /** The latest errors, newest first. */
  recentErrors(limit) {
    return this.index(errors, { index: "time", group: "", desc: true, limit });
  }
  async requestControl(kind, target) {
    const record = { id: newId(), kind, target, at: (/* @__PURE__ */ new Date()).toISOString(), status: "pending" };
    await this.backend.write([put(controls, record)]);
    return record;
  }
  /** Controls not applied yet, oldest first. */
  pendingControls() {
    return this.index(controls, { index: "pending", group: "" });
  }
  control(id) {
    return this.get(controls, id);
  }
  settleControl(record) {
    return this.backend.write([put(controls, record)]);
  }
};

// src/store/question-records.ts
var QuestionRecords = class extends BackendReads {
  /** Every question (tests); the Questions load the open ones. */
  all() {
    return this.readAll(questions);
  }
  open() {
    return this.index(questions, { index: "open", group: "" });
  }
  async byOrigin(origin) {
    return (await this.index(questions, { index: "origin", group: origin, limit: 1 }))[0];
  }
};

// src/store/schedule-records.ts
var ScheduleRecords = class extends BackendReads {
  /** Every trigger ever created (the CLI and tests; start-up uses liveTriggers). */
  triggers() {
    return this.readAll(triggers);
  }
  /** Active triggers, and ended ones whose last run is still under way. */
  liveTriggers() {
    return this.index(triggers, { index: "live", group: "" });
  }
  trigger(id) {
    return this.get(triggers, id);
  }
  async triggerByOrigin(origin) {
    return (await this.index(triggers, { index: "origin", group: origin, limit: 1 }))[0];
  }
  firing(id) {
    return this.get(firings, id);
  }
  /** A trigger's firings, oldest first. */
  firingsOf(triggerId) {
    return this.index(firings, { index: "trigger", group: triggerId });
  }
  /** Records a raised event, and the latest raising of its name in the same write. */
  async raise(name) {
    const record = { id: newId(), name, at: (/* @__PURE__ */ new Date()).toISOString() };
    const latest = await this.get(raisedNames, name);
    const newer = !latest || Date.parse(latest.at) <= Date.parse(record.at);
    await this.backend.write([put(raised, record), ...newer ? [put(raisedNames, { name, at: record.at, id: record.id })] : []]);
    return record;
  }
  /** The latest raising of every event name. */
  raisedNames() {
    return this.readAll(raisedNames);
  }
  /** Events raised at or after `since` (ms), by the time in their id. */
  raisedSince(since) {
    return this.index(raised, { index: "time", group: "", from: since });
  }
};

// src/store/user-records.ts
var UserRecords = class extends BackendReads {
  pairings() {
    return this.readAll(pairings);
  }
  pairing(code) {
    return this.get(pairings, code);
  }
  async allowed(user) {
    return await this.get(allowed, user) !== void 0;
  }
  /** The users approved by pairing code (not the owners of ALLOWED_USERS). */
  allowedUsers() {
    return this.readAll(allowed);
  }
  revoke(user) {
    return this.backend.write([remove(allowed, user)]);
  }
  /** Every user profile (time zones), read once at start-up. */
  profiles() {
    return this.readAll(profiles);
  }
};

// src/store/store.ts
var SEEN_RETENTION_MS = 24 * 36e5;
var PRUNE_EVERY_MS = 36e5;
var SEQUENTIAL = /^(telegram):(\d+)$/;
var Store = class _Store extends BackendReads {
  marks = /* @__PURE__ */ new Map();
  lastPrune = 0;
  /** The cluster's own records (processes, task claims). */
  cluster;
  /** Triggers, their firings, raised events. */
  schedules;
  /** Messages to send, edit or delete on a platform. */
  outbox;
  /** The questions agents asked users. */
  questions;
  /** Pairing codes, approved users, user profiles. */
  users;
  /** Usage samples, errors, the owner's controls. */
  owner;
  /** Each conversation's messages and replies (the history tools' HistoryReader). */
  history;
  constructor(backend) {
    super(backend);
    this.cluster = new ClusterRecords(backend);
    this.schedules = new ScheduleRecords(backend);
    this.outbox = new OutboxRecords(backend);
    this.questions = new QuestionRecords(backend);
    this.users = new UserRecords(backend);
    this.owner = new OwnerRecords(backend);
    this.history = new HistoryRecords(backend);
  }
  /** Opens the Postgres database at `storeUrl` when one is given, else `DATA_DIR/steward.sqlite`,
   *  migrating older data in place; throws NewerDataError on data written by a newer Steward. */
  static async open(dataDir, storeUrl2, postgres = {}) {
    if (storeUrl2) return new _Store(await (await Promise.resolve().then(() => (init_postgres(), postgres_exports))).PostgresBackend.open(storeUrl2, SCHEMA, (backend2) => migrate(backend2), postgres));
    const backend = await SqliteBackend.open(dataDir, SCHEMA);
    try {
      await migrate(backend);
    } catch (error) {
      await backend.close();
      throw error;
    }
    return new _Store(backend);
  }
  close() {
    return this.backend.close();
  }
  /** Writes every record given, atomically (see Backend.write). */
  save(records) {
    const ops = [];
    const add = (collection, list2) => {
      for (const record of list2 ?? []) ops.push(put(collection, record));
    };
    add(tasks, records.tasks);
    add(sessions, records.sessions);
    add(messages, records.messages);
    add(events, records.events);
    for (const id of records.eventsDone ?? []) ops.push(remove(events, id));
    add(conversations, records.conversations);
    add(outbox, records.outbox);
    add(history, records.history);
    add(questions, records.questions);
    const at2 = (/* @__PURE__ */ new Date()).toISOString();
    add(seen, records.seen?.map((id) => ({ id, at: at2 })));
    add(pairings, records.pairings);
    for (const code of records.pairingsDone ?? []) ops.push(remove(pairings, code));
    add(allowed, records.allowed?.map((user) => ({ user, at: at2 })));
    add(triggers, records.triggers);
    add(firings, records.firings);
    add(profiles, records.profiles);
    const written = this.backend.write(ops);
    if (records.seen?.length && Date.now() - this.lastPrune >= PRUNE_EVERY_MS) {
      this.lastPrune = Date.now();
      void written.then(() => this.pruneSeen()).catch(() => {
      });
    }
    return written;
  }
  // ── tasks ──────────────────────────────────────────────────────────────────
  /** Every task ever recorded, oldest first (the CLI and tests; start-up uses liveTasks). */
  tasks() {
    return this.readAll(tasks);
  }
  /** What start-up needs: live tasks (see isLiveTask), the batch heads of live tasks and every
   *  task those heads committed — so a batch can still be reported as a whole. Oldest first. */
  async liveTasks() {
    const found = /* @__PURE__ */ new Map();
    for (const task of await this.index(tasks, { index: "live", group: "" })) found.set(task.id, task);
    const fetch3 = async (ids) => {
      for (const id of ids) {
        const task = found.has(id) ? void 0 : await this.task(id);
        if (task) found.set(id, task);
      }
    };
    await fetch3(new Set([...found.values()].flatMap((task) => task.parentTaskId ? [task.parentTaskId] : [])));
    await fetch3(new Set([...found.values()].flatMap((task) => task.children ?? [])));
    return [...found.values()].sort((a, b) => a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  }
  task(id) {
    return this.get(tasks, id);
  }
  async taskByOrigin(origin) {
    return (await this.index(tasks, { index: "origin", group: origin, limit: 1 }))[0];
  }
  /** A conversation's ended tasks, newest first, `limit` at a time; `before` (an endedAt) pages on. */
  finishedTasks(conversation, page) {
    const to = page.before === void 0 ? void 0 : Date.parse(page.before) - 1;
    return this.index(tasks, { index: "finished", group: conversation, to, desc: true, limit: page.limit });
  }
  // ── conversations, sessions, inbox ─────────────────────────────────────────
  events() {
    return this.index(events, { index: "all", group: "" });
  }
  conversations() {
    return this.readAll(conversations);
  }
  conversation(id) {
    return this.get(conversations, id);
  }
  session(id) {
    return this.get(sessions, id);
  }
  messages(sessionId) {
    return this.index(messages, { index: "session", group: sessionId });
  }
  // ── dedupe, health, channel state, backup ──────────────────────────────────
  /** Was this platform event id taken before? Ids are kept SEEN_RETENTION_MS; a Telegram update
   *  at or below the highest pruned update_id is recognised as old too. */
  async seen(eventId) {
    if (await this.get(seen, eventId) !== void 0) return true;
    const sequential = SEQUENTIAL.exec(eventId);
    return sequential !== null && Number(sequential[2]) <= await this.mark(sequential[1]);
  }
  /** Drops event ids older than the retention window, raising each stream's mark to match. */
  async pruneSeen(now2 = Date.now()) {
    let pruned = 0;
    for (; ; ) {
      const old = await this.index(seen, { index: "time", group: "", to: now2 - SEEN_RETENTION_MS, limit: PAGE });
      if (old.length === 0) return pruned;
      const raised2 = /* @__PURE__ */ new Map();
      for (const record of old) {
        const sequential = SEQUENTIAL.exec(record.id);
        if (sequential) raised2.set(sequential[1], Math.max(Number(sequential[2]), raised2.get(sequential[1]) ?? await this.mark(sequential[1])));
      }
      await this.backend.write([...old.map((record) => remove(seen, record.id)), ...[...raised2].map(([stream, mark]) => put(seenMarks, { stream, mark }))]);
      for (const [stream, mark] of raised2) this.marks.set(stream, mark);
      pruned += old.length;
    }
  }
  /** Whether the store takes writes (the health check): one small record, rewritten. */
  async probe() {
    await this.backend.write([put(meta, { id: "probe", at: (/* @__PURE__ */ new Date()).toISOString() })]);
  }
  /** A channel adapter's own durable entries, apart from everything else. */
  channelState(channel) {
    return {
      set: (key, value) => this.backend.write([put(channelEntries, { channel, key, value })]),
      delete: (key) => this.backend.write([remove(channelEntries, channelEntries.id({ channel, key, value: null }))]),
      list: async (prefix) => (await this.index(channelEntries, { index: "channel", group: channel })).filter((entry) => entry.key.startsWith(prefix)).map((entry) => ({ key: entry.key, value: entry.value }))
    };
  }
  /** A consistent copy of the whole store in a new file, taken while Steward runs. */
  backup(file) {
    return this.backend.backup(file);
  }
  // ── plumbing ───────────────────────────────────────────────────────────────
  async mark(stream) {
    let mark = this.marks.get(stream);
    if (mark === void 0) {
      mark = (await this.get(seenMarks, stream))?.mark ?? -1;
      this.marks.set(stream, mark);
    }
    return mark;
  }
};

// src/access/access.ts
import { randomInt } from "node:crypto";
var ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
var CODE_LENGTH = 8;
var PAIRING_TTL_MS = 60 * 6e4;
var Access = class {
  constructor(allowedUsers2, store, outbox2, log) {
    this.allowedUsers = allowedUsers2;
    this.store = store;
    this.outbox = outbox2;
    this.log = log;
  }
  allowedUsers;
  store;
  outbox;
  log;
  approved = /* @__PURE__ */ new Set();
  pairings = /* @__PURE__ */ new Map();
  async load() {
    for (const pairing of await this.store.users.pairings()) this.pairings.set(pairing.code, pairing);
  }
  /** Owners: the users named in ALLOWED_USERS. They alone may run admin commands. */
  isOwner(user) {
    return this.allowedUsers.users.has(user);
  }
  async allows(user) {
    if (this.allowedUsers.anyone || this.isOwner(user) || this.approved.has(user)) return true;
    if (!await this.store.users.allowed(user)) return false;
    this.approved.add(user);
    return true;
  }
  /** Answers a stranger: a fresh pairing code unless they already hold a valid one. */
  async stranger(message) {
    this.log.warn({ user: message.user, conversation: message.conversation }, "message from a user who is not allowed");
    const now2 = Date.now();
    const current = [...this.pairings.values()].find((p) => p.user === message.user && Date.parse(p.expiresAt) > now2);
    if (current) return;
    const expired = [...this.pairings.values()].filter((p) => Date.parse(p.expiresAt) <= now2).map((p) => p.code);
    const pairing = { code: newCode(), user: message.user, conversation: message.conversation, expiresAt: new Date(now2 + PAIRING_TTL_MS).toISOString() };
    const text = `Hi! I only talk to people my owner has approved. You are ${message.user} to me. To be approved, give my owner this code (valid for 1 hour): ${pairing.code}`;
    const reply = this.outbox.prepare(message.conversation, text, `pairing:${pairing.code}`);
    await this.store.save({ pairings: [pairing], pairingsDone: expired, outbox: [reply] });
    for (const code of expired) this.pairings.delete(code);
    this.pairings.set(pairing.code, pairing);
    this.outbox.commit(reply);
  }
  /** Approves the holder of a valid code; returns the user, or why not. */
  async approve(code) {
    const pairing = await approvePairing(this.store, code);
    if ("error" in pairing) return pairing;
    this.pairings.delete(pairing.code);
    this.approved.add(pairing.user);
    const welcome = this.outbox.prepare(pairing.conversation, "You have been approved \u2014 hello! What can I do for you?", `paired:${pairing.code}`);
    await this.store.save({ outbox: [welcome] });
    this.outbox.commit(welcome);
    return { user: pairing.user };
  }
  /** Takes back an approval made by pairing code, at once: the user is a stranger again. */
  async revoke(user) {
    if (this.isOwner(user)) return { error: `${user} is an owner in ALLOWED_USERS; remove them there and restart Steward` };
    if (!this.approved.has(user) && !await this.store.users.allowed(user)) return { error: `${user} is not an approved user` };
    await this.store.users.revoke(user);
    this.approved.delete(user);
    return { done: this.allowedUsers.anyone ? `revoked ${user} (ALLOWED_USERS is * : everyone may still talk to Steward)` : `revoked ${user}` };
  }
  pending() {
    return [...this.pairings.values()].filter((p) => Date.parse(p.expiresAt) > Date.now());
  }
};
async function approvePairing(store, code) {
  const wanted = code.trim().toUpperCase();
  const pairing = await store.users.pairing(wanted);
  if (!pairing) return { error: `no pairing code ${wanted}` };
  if (Date.parse(pairing.expiresAt) <= Date.now()) return { error: `pairing code ${wanted} has expired; ask them to message Steward again for a new one` };
  await store.save({ allowed: [pairing.user], pairingsDone: [pairing.code] });
  return pairing;
}
function newCode() {
  return Array.from({ length: CODE_LENGTH }, () => ALPHABET[randomInt(ALPHABET.length)]).join("");
}

// src/attachments/attachments.ts
import { mkdir as mkdir3, open } from "node:fs/promises";
import path3 from "node:path";
init_workspace();
init_media_types();

// src/attachments/inbox.ts
import { readdir as readdir2 } from "node:fs/promises";
import path2 from "node:path";
function inboxOn(userDir, now2) {
  return path2.join(userDir, "inbox", localDate(now2));
}
async function uploadsOn(userDir, now2) {
  return (await readdir2(inboxOn(userDir, now2)).catch(() => [])).length;
}
function localDate(now2) {
  return [now2.getFullYear(), now2.getMonth() + 1, now2.getDate()].map((n) => String(n).padStart(2, "0")).join("-");
}

// src/attachments/names.ts
var MAX_NAME_BYTES = 200;
function safeFileName(name) {
  const last = name.split(/[/\\]/).pop() ?? "";
  let safe = last.normalize("NFC").replace(/[\u0000-\u001f\u007f<>:"|?*]/g, "_").replace(/^[.\s]+/, "").trim();
  if (!safe) safe = "file";
  if (Buffer.byteLength(safe) <= MAX_NAME_BYTES) return safe;
  const dot = safe.lastIndexOf(".");
  const ext = dot > 0 && safe.length - dot <= 10 ? safe.slice(dot) : "";
  let stem = safe.slice(0, safe.length - ext.length);
  while (Buffer.byteLength(stem + ext) > MAX_NAME_BYTES) stem = stem.slice(0, -1);
  return stem + ext;
}

// src/attachments/attachments.ts
var AUDIO_KINDS = /* @__PURE__ */ new Set(["voice", "audio"]);
var Attachments = class {
  constructor(deps) {
    this.deps = deps;
  }
  deps;
  async take(user, caption, attachments) {
    const lines = [];
    const transcripts = [];
    const images = [];
    const notices = [];
    const now2 = /* @__PURE__ */ new Date();
    const userDir = userWorkspaceDir(this.deps.workspaceDir, user);
    const perDay = this.deps.uploadsPerDay(user);
    let uploadsLeft = perDay === void 0 ? Number.POSITIVE_INFINITY : perDay - await uploadsOn(userDir, now2);
    for (const [index, attachment] of attachments.entries()) {
      const name = attachment.name ? safeFileName(attachment.name) : generatedName(attachment, now2, index);
      const mediaType = attachment.mimeType?.split(";")[0]?.trim() || mediaTypeOf(name);
      const refused = (why, userWhy) => {
        lines.push(`Not saved (${why}): ${name} (${mediaType}${attachment.size === void 0 ? "" : `, ${sizeText(attachment.size)}`})`);
        notices.push(userWhy);
      };
      if (uploadsLeft <= 0) {
        refused("over the daily upload limit", `I did not save ${name}: you may send ${perDay} files a day (QUOTA_UPLOADS_PER_DAY); send it again tomorrow.`);
        continue;
      }
      const limit = `the ${sizeText(this.deps.maxBytes)} limit for files`;
      if (attachment.size !== void 0 && attachment.size > this.deps.maxBytes) {
        refused("over the size limit", `${name} is ${sizeText(attachment.size)}, over ${limit}, so I did not save it.`);
        continue;
      }
      const room = this.deps.quotaBytes - await usage2(userDir);
      const full = `your workspace is full (${sizeText(this.deps.quotaBytes)} allowed), so I did not save ${name}. Files you no longer need can be deleted there.`;
      if ((attachment.size ?? 0) > room) {
        refused("the workspace is full", `${name} is ${sizeText(attachment.size)}, and ${full}`);
        continue;
      }
      let bytes;
      try {
        bytes = await attachment.download(Math.min(this.deps.maxBytes, Math.max(room, 0)));
      } catch (error) {
        if (error instanceof FileTooLarge && error.maxBytes < this.deps.maxBytes) refused("the workspace is full", `${name} is too big for what is left: ${full}`);
        else if (error instanceof FileTooLarge) refused("over the size limit", `${name} is over ${limit}, so I did not save it.`);
        else {
          const ref = incident(this.deps.log, error, "could not download a file a user sent", { user, file: name });
          refused("could not be downloaded", `I could not fetch ${name} (reference ${ref}); please send it again.`);
        }
        continue;
      }
      const file = await this.save(userDir, now2, name, bytes);
      uploadsLeft--;
      lines.push(`Saved file: ${workspaceRelative(userDir, file)} (${mediaType}, ${sizeText(bytes.byteLength)})`);
      if (this.deps.vision && isModelImage(mediaType)) images.push({ path: file, mediaType });
      if (AUDIO_KINDS.has(attachment.kind) || mediaType.startsWith("audio/")) {
        const heard = await this.transcribe(bytes, name, notices);
        if (heard) transcripts.push(attachments.length > 1 ? `${name}: ${heard}` : heard);
      }
    }
    const said = [caption.trim(), ...transcripts].filter(Boolean).join("\n\n");
    const saved = lines.some((line) => line.startsWith("Saved file:"));
    const text = said || saved ? [said, lines.join("\n")].filter(Boolean).join("\n\n") : "";
    return { text, images, notices };
  }
  async transcribe(bytes, name, notices) {
    if (!this.deps.transcribe) {
      notices.push(`Voice messages are not set up here (no TRANSCRIBE_MODEL), so I saved ${name} but cannot listen to it.`);
      return void 0;
    }
    try {
      return (await this.deps.transcribe(bytes)).trim() || void 0;
    } catch (error) {
      notices.push(`I saved ${name} but could not transcribe it (reference ${incident(this.deps.log, error, "could not transcribe a voice message", { file: name })}).`);
      return void 0;
    }
  }
  /** Writes the file under the user's dated inbox folder; a name taken already gets -2, -3… */
  async save(userDir, now2, name, bytes) {
    const folder = inboxOn(userDir, now2);
    await mkdir3(folder, { recursive: true });
    const { name: stem, ext } = path3.parse(name);
    for (let n = 1; ; n++) {
      const file = path3.join(folder, n === 1 ? name : `${stem}-${n}${ext}`);
      const handle = await open(file, "wx").catch((error) => {
        if (error.code === "EEXIST") return void 0;
        throw error;
      });
      if (!handle) continue;
      try {
        await handle.writeFile(bytes);
      } finally {
        await handle.close();
      }
      return file;
    }
  }
};
function generatedName(attachment, now2, index) {
  const time = [now2.getHours(), now2.getMinutes(), now2.getSeconds()].map((n) => String(n).padStart(2, "0")).join("");
  return `${attachment.kind.replace("_", "-")}-${time}${index > 0 ? `-${index + 1}` : ""}.${extensionOf(attachment.mimeType ?? (attachment.kind === "photo" ? "image/jpeg" : void 0))}`;
}
async function usage2(userDir) {
  return workspaceUsage(userDir).catch((error) => {
    if (error.code === "ENOENT") return 0;
    throw error;
  });
}

// src/attachments/transcribe.ts
import { experimental_transcribe as transcribe } from "ai";
function transcriber(config) {
  const spec = config.attachments.transcribeModel;
  if (!spec) return void 0;
  const model = resolveTranscriptionModel(spec, config);
  return async (audio) => (await transcribe({ model, audio, maxRetries: config.maxRetries })).text;
}

// src/channel/delivery.ts
var FIRST_RETRY_MS = 1e3;
var MAX_RETRY_MS = 5 * 6e4;
var backoffMs = (attempt) => Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.min(attempt - 1, 30));
var LOCAL_ERRORS = [RangeError, TypeError, SyntaxError, ReferenceError, EvalError, URIError];
function classify(channel, error, onClassifierError) {
  if (error instanceof UndeliverableMessage) return "refused";
  let permanent = false;
  try {
    permanent = channel.isPermanent?.(error) === true;
  } catch (classifying) {
    onClassifierError(classifying);
  }
  if (permanent) return "refused";
  return LOCAL_ERRORS.some((type) => error instanceof type && error.constructor === type) ? "local" : "transient";
}
var ATTACHMENT_NAME = "reply.md";
var CUT_NOTE = `

\u2026 (the whole reply is in the attached file ${ATTACHMENT_NAME})`;
function capped(message, channel, maxMessages) {
  const limit = channel.messageLimit;
  if (!limit || message.text.length <= limit * maxMessages) return message;
  const [first = ""] = splitPlain(message.text, limit - CUT_NOTE.length);
  return { ...message, text: first + CUT_NOTE, attachment: { name: ATTACHMENT_NAME, text: message.text } };
}

// src/channel/outbox.ts
var UNDELIVERED = "undelivered:";
var Outbox = class {
  constructor(store, channels, log, on = {}, options = {}) {
    this.store = store;
    this.channels = channels;
    this.log = log;
    this.on = on;
    this.maxReplyMessages = options.maxReplyMessages ?? 5;
  }
  store;
  channels;
  log;
  on;
  /** The records still to send, oldest first: all the outbox keeps in memory. A record leaves
   *  once delivered or failed; it stays in the store (by id, origin and firing), so memory and
   *  the cost of a send do not grow with every message ever sent. */
  pending = /* @__PURE__ */ new Map();
  byOrigin = /* @__PURE__ */ new Map();
  /** Records found pending at start-up: they may have got out just before the stop. */
  uncertain = /* @__PURE__ */ new Set();
  maxReplyMessages;
  /** One sender per conversation keeps its messages in order. */
  senders = /* @__PURE__ */ new Map();
  again = /* @__PURE__ */ new Set();
  timers = /* @__PURE__ */ new Set();
  /** Ends the pauses between attempts at a write, so stop() does not wait them out. */
  wakers = /* @__PURE__ */ new Set();
  stopped = false;
  async load() {
    for (const record of await this.store.outbox.unsent()) this.track(record);
    for (const record of this.pending.values()) {
      this.uncertain.add(record.id);
      this.kick(record.conversation);
    }
  }
  /** Queues a message for `conversation` unless `origin` already produced one. The message is
   *  recorded in the conversation's history in the same write, with whatever else `also` holds.
   *  `firingId`: the scheduled firing it reports. `fresh`: the origin cannot have produced a
   *  record before (a call of a step this run made, a new id), so the store is not asked —
   *  only a producer that may be replayed pays for that read. */
  async add(conversation, message, origin, also = {}, firingId, fresh = false) {
    const existing = this.byOrigin.get(origin) ?? (fresh ? void 0 : await this.store.outbox.byOrigin(origin));
    if (existing) return existing;
    const record = { ...this.prepare(conversation, message, origin), firingId };
    const said = record.file ? [`[sent file ${record.file.name}]`, record.text].filter(Boolean).join(" ") : record.text;
    await this.store.save({ ...also, outbox: [record, ...also.outbox ?? []], history: [{ id: record.id, conversation, role: "assistant", text: said }, ...also.history ?? []] });
    this.commit(record);
    return record;
  }
  /** A record for `message`, to be written by the caller in its own save and then `commit`ted:
   *  for messages that must land together with another state change (a question's answer). */
  prepare(conversation, message, origin, editOf) {
    const { text, buttons, file, plain: plain3, live } = typeof message === "string" ? { text: message, buttons: void 0, file: void 0, plain: void 0, live: void 0 } : message;
    return { id: newId(), origin, conversation, text, buttons, ...file && { file }, ...live && { live }, editOf, plain: plain3, status: "pending", attempts: 0, createdAt: (/* @__PURE__ */ new Date()).toISOString() };
  }
  /** Starts sending a record the caller has written. */
  commit(record) {
    this.track(record);
    this.kick(record.conversation);
  }
  /** Has a message been queued as this firing's report? (Every record is written before it is
   *  committed, so the store knows.) */
  async hasFiring(firingId) {
    return await this.store.outbox.ofFiring(firingId) !== void 0;
  }
  /** The channels messages can go to. */
  channelNames() {
    return [...this.channels.keys()];
  }
  /** Messages written but not yet delivered (or failed). */
  get backlog() {
    return this.pending.size;
  }
  /** True while a message could still go out without a new event (now or after a backoff). */
  get busy() {
    return this.senders.size > 0 || [...this.pending.values()].some((record) => this.channels.has(channelOf(record.conversation)));
  }
  /** Sends nothing more, and waits for sends under way so their ids are on record. */
  async stop() {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    for (const wake of this.wakers) wake();
    await Promise.allSettled(this.senders.values());
  }
  track(record) {
    if (record.status === "pending") {
      this.pending.set(record.id, record);
      this.byOrigin.set(record.origin, record);
    } else {
      this.pending.delete(record.id);
      this.byOrigin.delete(record.origin);
    }
  }
  nextPending(conversation) {
    for (const record of this.pending.values()) if (record.conversation === conversation) return record;
    return void 0;
  }
  kick(conversation) {
    if (this.stopped) return;
    if (this.senders.has(conversation)) {
      this.again.add(conversation);
      return;
    }
    const sender = this.drain(conversation).catch((error) => this.log.error({ err: error, conversation }, "outbox sender failed; it resumes at the next message or restart")).finally(() => {
      this.senders.delete(conversation);
      if (this.again.delete(conversation)) this.kick(conversation);
      this.on.changed?.();
    });
    this.senders.set(conversation, sender);
  }
  async drain(conversation) {
    const channel = this.channels.get(channelOf(conversation));
    if (!channel) {
      this.log.warn({ conversation }, "no channel for this conversation; its messages wait until one runs");
      return;
    }
    for (; ; ) {
      const next = this.nextPending(conversation);
      if (!next || this.stopped) return;
      const due = next.nextAttemptAt ? Date.parse(next.nextAttemptAt) - Date.now() : 0;
      if (due > 0) {
        const timer = setTimeout(() => {
          this.timers.delete(timer);
          this.kick(conversation);
        }, due);
        this.timers.add(timer);
        return;
      }
      await this.send(channel, next);
    }
  }
  async send(channel, record) {
    let update;
    try {
      const found = this.uncertain.delete(record.id) ? await this.findSent(channel, record) : void 0;
      const { messageId } = found ?? await this.deliver(channel, record);
      update = { ...record, status: "delivered", messageId, attempts: record.attempts + 1, nextAttemptAt: void 0, error: void 0 };
    } catch (error) {
      update = this.afterFailure(channel, record, error);
    }
    this.track(update);
    if (update.status === "delivered") await this.on.settled?.(update);
    if (!await this.persist(update)) return;
    if (update.status === "failed" && update.plain && !update.origin.startsWith(UNDELIVERED)) await this.tellUndelivered(update);
    if (update.status === "failed") await this.on.settled?.(update);
  }
  /** A send of unknown outcome (pending at start-up), looked up where the channel can. A failed
   *  lookup is no answer: the message is sent, as it would be without the lookup. */
  async findSent(channel, record) {
    if (!channel.findSent || record.editOf) return void 0;
    try {
      const found = await channel.findSent(record.conversation, record.id, new Date(Date.parse(record.createdAt) - 6e4));
      if (found) this.log.warn({ conversation: record.conversation, outbox: record.id }, "the message got out before the restart; not sent again");
      return found;
    } catch (error) {
      this.log.warn({ err: error, conversation: record.conversation, outbox: record.id }, "could not look up whether a message got out before the restart; sending it");
      return void 0;
    }
  }
  /** A refusal fails the record; an error of the adapter's own code sends it as plain text,
   *  once; anything else schedules the next attempt. */
  afterFailure(channel, record, error) {
    const attempts = record.attempts + 1;
    const message = error instanceof Error ? error.message : String(error);
    const context = { conversation: record.conversation, outbox: record.id, attempts, err: message };
    const kind = classify(channel, error, (classifying) => this.log.error({ err: classifying, channel: channel.name }, "could not classify a send error; taking it as transient"));
    if (kind === "local" && !record.plain) {
      this.log.error({ ...context, err: error }, "could not send the message as formatted; sending it as plain text");
      return { ...record, attempts, error: message, plain: true, status: "pending", nextAttemptAt: void 0 };
    }
    if (kind !== "transient") {
      this.log.error(context, kind === "local" ? "could not send the message even as plain text; giving up" : "the platform refused the message for good; it is not retried");
      return { ...record, attempts, error: message, status: "failed", nextAttemptAt: void 0 };
    }
    const delay = backoffMs(attempts);
    this.log.warn({ ...context, retryInMs: delay }, "send failed; will retry");
    return { ...record, attempts, error: message, status: "pending", nextAttemptAt: new Date(Date.now() + delay).toISOString() };
  }
  /** Tells the user, in a short plain note after it, that a message of theirs could not be sent. */
  async tellUndelivered(record) {
    const note = { text: "(A message could not be shown here because of an error. Please ask again in other words.)", plain: true };
    await this.add(record.conversation, note, `${UNDELIVERED}${record.id}`).catch((error) => this.log.error({ err: error, outbox: record.id }, "could not queue the note about an undelivered message"));
  }
  /** Writes a record's new state, retrying a failed write with backoff until it lands; once
   *  stopping, after one last try it gives up (false). Meanwhile the conversation's sender
   *  waits: at most one of its messages is ever delivered but not on record. */
  async persist(update) {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.store.save({ outbox: [update] });
        if (attempt > 1) this.log.warn({ outbox: update.id, attempt }, "the message's state is on record after all");
        return true;
      } catch (error) {
        const context = { err: error, conversation: update.conversation, outbox: update.id, status: update.status, attempt };
        if (this.stopped) {
          const lost = update.status === "delivered" ? "; it was delivered and will be sent again after the restart" : "";
          this.log.error(context, `could not record the message's state${lost}`);
          return false;
        }
        this.log.error(context, "could not record the message's state; retrying (it is not sent again meanwhile)");
        await this.pause(backoffMs(attempt));
      }
    }
  }
  /** Resolves after `ms`, or at once when the outbox stops. */
  pause(ms) {
    return new Promise((resolve3) => {
      const wake = () => {
        clearTimeout(timer);
        this.wakers.delete(wake);
        resolve3();
      };
      const timer = setTimeout(wake, ms);
      this.wakers.add(wake);
    });
  }
  /** An edit goes to the message it edits; when that one never got out, the new text is sent
   *  as a message of its own so the user still sees it. Edits are idempotent, so a retried one
   *  does no harm. */
  async deliver(channel, record) {
    const target = record.editOf ? this.pending.get(record.editOf) ?? await this.store.outbox.record(record.editOf) : void 0;
    if (target?.messageId) {
      await channel.edit(record.conversation, target.messageId, { text: record.text, buttons: record.buttons });
      return { messageId: target.messageId };
    }
    const message = { text: record.text, buttons: record.buttons, ...record.file && { file: record.file }, plain: record.plain || void 0, ref: record.id, live: record.live };
    return channel.send(record.conversation, capped(message, channel, this.maxReplyMessages));
  }
};

// src/command/commands.ts
import { readdirSync as readdirSync2, readFileSync as readFileSync2 } from "node:fs";
import { basename as basename3, join as join5 } from "node:path";
import matter2 from "gray-matter";
import { z as z10 } from "zod";

// src/command/template-parts.ts
init_tool();
init_workspace();
import { spawn } from "node:child_process";
import { mkdir as mkdir4, open as open2 } from "node:fs/promises";
var MAX_PART_CHARS = 2e4;
var COMMAND_TIMEOUT_MS = 3e4;
var marker = (index) => `\0${index}\0`;
var MARKED = /\0(\d+)\0/g;
function markParts(template) {
  const parts = [];
  const marked = template.replace(/!`([^`\n]+)`|\[\[([^\]\n]+)\]\]/g, (_, command, name) => {
    parts.push(command !== void 0 ? { kind: "shell", command } : { kind: "include", name: name.trim() });
    return marker(parts.length - 1);
  });
  return { marked, parts };
}
function unmarked(text) {
  return text.replaceAll("\0", "");
}
async function resolveParts(prompt, parts, context) {
  if (parts.length === 0) return prompt;
  const resolved = await Promise.all(parts.map((part) => resolvePart(part, context)));
  return prompt.replace(MARKED, (_, index) => resolved[Number(index)] ?? "");
}
async function resolvePart(part, context) {
  if (part.kind === "shell") return runShell(part.command, context.workspace);
  if (context.workerTypes.has(part.name)) return `the ${part.name} worker (delegate this to the worker type "${part.name}")`;
  try {
    const text = await readCapped(resolveInWorkspace(context.workspace, part.name));
    return `<file path="${part.name}">
${text}
</file>`;
  } catch (error) {
    const reason = error instanceof ToolError ? error.message : error.code === "ENOENT" ? "no such file in the workspace" : String(error.message ?? error);
    return `[[${part.name}]: could not be read: ${reason}]`;
  }
}
async function readCapped(path11) {
  const file = await open2(path11, "r");
  try {
    const buffer = Buffer.alloc(MAX_PART_CHARS * 4 + 4);
    const { bytesRead } = await file.read(buffer, 0, buffer.length, 0);
    const size = (await file.stat()).size;
    const text = buffer.subarray(0, bytesRead).toString("utf8");
    return capped2(text, size > bytesRead);
  } finally {
    await file.close();
  }
}
function capped2(text, more) {
  if (text.length <= MAX_PART_CHARS && !more) return text;
  return `${text.slice(0, MAX_PART_CHARS)}
[\u2026 cut at ${MAX_PART_CHARS} characters]`;
}
async function runShell(command, cwd, timeoutMs = COMMAND_TIMEOUT_MS) {
  await mkdir4(cwd, { recursive: true });
  return new Promise((resolve3) => {
    const child = spawn("sh", ["-c", command], { cwd, detached: true, stdio: ["ignore", "pipe", "pipe"], env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? cwd } });
    let output = "";
    let more = false;
    const take = (chunk) => {
      if (output.length >= MAX_PART_CHARS) return void (more = true);
      output += chunk.toString("utf8");
    };
    child.stdout.on("data", take);
    child.stderr.on("data", take);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      stopGroup(child.pid);
    }, timeoutMs);
    const finish = (outcome) => {
      clearTimeout(timer);
      const text = capped2(output.trimEnd(), more || output.length > MAX_PART_CHARS);
      resolve3(outcome ? `[!\`${command}\` ${outcome}]${text ? `
${text}` : ""}` : text);
    };
    child.on("error", (error) => finish(`could not run: ${error.message}`));
    child.on("close", (code, signal) => {
      stopGroup(child.pid);
      if (timedOut) finish(`was stopped after ${timeoutMs / 1e3} s`);
      else if (code !== 0) finish(signal ? `ended by ${signal}` : `failed with exit code ${code}`);
      else finish(void 0);
    });
  });
}
function stopGroup(pid) {
  if (pid === void 0) return;
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
  }
}

// src/command/commands.ts
var BUILT_IN = [
  { name: "help", description: "List the commands" },
  { name: "tasks", description: "List this conversation's queued and running tasks and schedules" },
  { name: "cancel", description: "Cancel a task or schedule: /cancel <id>" },
  { name: "new", description: "Start a fresh conversation (the old one stays in memory)" },
  { name: "pairing", description: "Owner only: /pairing approve <code>, /pairing list", ownerOnly: true },
  { name: "pause", description: "Pause a schedule: /pause <id>" },
  { name: "resume", description: "Resume a paused schedule (without catching up): /resume <id>" },
  { name: "stop", description: "Stop everything running in this conversation: the reply and all tasks" },
  { name: "timezone", description: "Show or set your time zone: /timezone Europe/Berlin" },
  { name: "memory", description: "Show what I remember about you (memory.md and the latest notes)" }
];
var FrontMatter2 = z10.object({
  description: z10.string().min(1),
  agent: z10.string().min(1).optional(),
  subtask: z10.boolean().optional()
}).strict();
var NAME = /^[a-z0-9_]{1,32}$/;
function loadCommands(dir, agents) {
  const commands = [];
  for (const file of list(dir).filter((f) => f.endsWith(".md")).sort()) {
    const name = basename3(file, ".md");
    const where = `prompts/commands/${file}`;
    if (!NAME.test(name)) throw new Error(`${where}: a command name is 1-32 lowercase letters, digits or _`);
    if (BUILT_IN.some((c) => c.name === name)) throw new Error(`${where}: /${name} is a built-in command`);
    const parsed = matter2(readFileSync2(join5(dir, file), "utf8"));
    const front = FrontMatter2.safeParse(parsed.data);
    if (!front.success) throw new Error(`${where}: ${front.error.issues.map((i) => `${i.path.join(".") || "front matter"}: ${i.message}`).join("; ")}`);
    const agent = front.data.agent ?? "teller";
    if (!agents.has(agent)) throw new Error(`${where}: agent "${agent}" is not teller, planner or a worker type (${[...agents].join(", ")})`);
    const subtask = agent !== "teller" && front.data.subtask !== false;
    const { marked, parts } = markParts(parsed.content.trim());
    commands.push({ name, description: front.data.description, agent, subtask, template: marked, parts });
  }
  return commands;
}
function parseCommand(text, commands, workerTypes) {
  const trimmed = text.trim();
  const mention = /^@([\w-]+)\s+([\s\S]+)$/.exec(trimmed);
  if (mention && workerTypes.has(mention[1])) return { kind: "worker", agent: mention[1], prompt: mention[2].trim() };
  const match2 = /^\/([a-z0-9_]+)(?:@\S+)?(?:\s+([\s\S]*))?$/i.exec(trimmed);
  if (!match2) return void 0;
  const name = match2[1].toLowerCase();
  const rest = unmarked(match2[2] ?? "").trim();
  const args = splitArguments(rest);
  switch (name) {
    case "help":
      return { kind: "help" };
    case "tasks":
      return { kind: "tasks" };
    case "cancel":
      return { kind: "cancel", id: args[0] };
    case "pause":
    case "resume":
      return { kind: name, id: args[0] };
    case "stop":
      return { kind: "stop" };
    case "timezone":
      return { kind: "timezone", zone: args[0] };
    case "memory":
      return { kind: "memory" };
    case "new":
      return { kind: "new" };
    case "pairing":
      return { kind: "pairing", args };
  }
  const command = commands.find((c) => c.name === name);
  return command ? { kind: "file", command, prompt: expandTemplate(command.template, rest, args) } : void 0;
}
function expandTemplate(template, raw, args) {
  const placeholders3 = [...template.matchAll(/\$(\d+)/g)].map((m) => Number(m[1]));
  const last = placeholders3.length > 0 ? Math.max(...placeholders3) : 0;
  let out = template.replace(/\$(\d+)/g, (_, n) => {
    const index = Number(n) - 1;
    return Number(n) === last ? args.slice(index).join(" ") : args[index] ?? "";
  });
  const usesArguments = out.includes("$ARGUMENTS");
  out = out.replaceAll("$ARGUMENTS", raw);
  if (placeholders3.length === 0 && !usesArguments && raw) out = `${out}

${raw}`;
  return out.trim();
}
function splitArguments(text) {
  return [...text.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]);
}
function list(dir) {
  try {
    return readdirSync2(dir);
  } catch {
    return [];
  }
}

// src/question/asking.ts
init_taint();
var Asking = class {
  constructor(questions2) {
    this.questions = questions2;
  }
  questions;
  async ask(caller, question) {
    return await this.questions.ask({ conversation: caller.conversation, user: caller.user, origin: `${caller.sessionId}:${caller.callId}` }, question, "ask_user") ?? AWAIT_ANSWER;
  }
  async approve(caller, tool2, pattern) {
    const who = caller.role === "teller" ? "I" : `A ${caller.agent} task`;
    const afterUntrusted = tool2.startsWith(TAINTED);
    const what = afterUntrusted ? `${tool2.slice(TAINTED.length)} on \u201C${pattern}\u201D after reading content from outside (a web page, a file, a tool's or a task's answer)` : `${tool2} on \u201C${pattern}\u201D`;
    const question = { question: `${who} would like to use ${what}. Allow it?`, options: ["Allow", "Deny"], default: "Deny", timeout: 600 };
    const { answer: answer2 } = await this.questions.waitFor({ conversation: caller.conversation, user: caller.user, origin: `${caller.sessionId}:${caller.callId}:permission` }, question, caller.abort);
    return answer2 === "Allow";
  }
  inquire(caller, key, question) {
    return this.questions.waitFor({ conversation: caller.conversation, user: caller.user, origin: `${caller.sessionId}:${caller.callId}:${key}` }, question, caller.abort);
  }
};

// src/question/questions.ts
var SKIP = "/skip";
var MAX_DELAY_MS2 = 2 ** 31 - 1;
var Questions = class {
  constructor(store, outbox2, log, wake) {
    this.store = store;
    this.outbox = outbox2;
    this.log = log;
    this.wake = wake;
  }
  store;
  outbox;
  log;
  wake;
  records = /* @__PURE__ */ new Map();
  /** Questions whose options the user was reminded of: the next text that is no option is taken as is. */
  hinted = /* @__PURE__ */ new Set();
  byOrigin = /* @__PURE__ */ new Map();
  timers = /* @__PURE__ */ new Map();
  /** Runs that wait in memory for a permission question. */
  waiters = /* @__PURE__ */ new Map();
  stopped = false;
  /** Loads the questions; those whose deadline passed while Steward was down expire now,
   *  exactly as their timer would have expired them. */
  async load() {
    for (const record of await this.store.questions.open()) this.track(record);
    for (const record of this.records.values()) if (record.status === "open") this.arm(record);
  }
  stop() {
    this.stopped = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
  }
  /** The newest open question of a conversation (of one purpose, if given). */
  openIn(conversation, purpose) {
    let newest2;
    for (const record of this.records.values()) {
      if (record.conversation === conversation && record.status === "open" && (!purpose || record.purpose === purpose)) newest2 = record;
    }
    return newest2;
  }
  /**
   * Asks once per asker: a replayed call gets the answer if there is one by now, or undefined
   * while the question is open. A new question replaces the conversation's open one.
   */
  async ask(asker, question, purpose) {
    const known = this.byOrigin.get(asker.origin) ?? await this.store.questions.byOrigin(asker.origin);
    if (known) return known.status === "open" ? void 0 : { answer: known.answer ?? "", source: known.source ?? "timeout" };
    const older = purpose === "ask_user" ? this.openIn(asker.conversation, "ask_user") : void 0;
    if (older) await this.resolve(older, fallback(older), { superseded: true });
    const id = newId();
    const message = this.outbox.prepare(asker.conversation, { text: questionText(question), buttons: buttonsOf(id, question.options) }, `question:${id}`);
    const record = {
      id,
      origin: asker.origin,
      conversation: asker.conversation,
      user: asker.user,
      question: question.question,
      options: question.options,
      default: question.default,
      deadline: new Date(Date.now() + question.timeout * 1e3).toISOString(),
      purpose,
      status: "open",
      messageId: message.id,
      createdAt: (/* @__PURE__ */ new Date()).toISOString()
    };
    await this.store.save({ questions: [record], outbox: [message], history: [{ id: message.id, conversation: asker.conversation, role: "assistant", text: message.text }] });
    this.track(record);
    this.outbox.commit(message);
    this.arm(record);
    return void 0;
  }
  /** For a run that cannot end while it waits (a permission asked by a task): resolves with the
   *  answer, or rejects when the run is aborted — which also closes the question. */
  async waitFor(asker, question, signal) {
    const ready = await this.ask(asker, question, "permission");
    if (ready) return ready;
    const record = this.byOrigin.get(asker.origin);
    return new Promise((resolve3, reject) => {
      const onAbort = () => {
        this.waiters.delete(record.id);
        void this.close(this.records.get(record.id), "(no longer needed)").finally(() => reject(signal.reason));
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.waiters.set(record.id, (answer2) => {
        signal.removeEventListener("abort", onAbort);
        resolve3(answer2);
      });
    });
  }
  /**
   * Offers a user's message to the conversation's open question. "answered": it was the
   * answer; "hint": it was not one of the options, and the user was told which are;
   * "not_yours": a button of a question asked of another user (nothing happens); undefined:
   * there is no open question for it (a stale button press included), so it is an ordinary message.
   */
  async take(message) {
    if (message.action !== void 0) {
      const [id, index] = message.action.split(":");
      const record2 = this.records.get(id ?? "");
      const option = record2?.status === "open" && record2.conversation === message.conversation ? record2.options?.[Number(index)] : void 0;
      if (!record2 || option === void 0) return "stale";
      if (record2.user !== message.user) return "not_yours";
      await this.resolve(record2, { answer: option, source: "user" }, { typed: message.text });
      return "answered";
    }
    const record = this.openIn(message.conversation);
    if (!record || record.user !== message.user) return void 0;
    if (message.text.trim().toLowerCase() === SKIP) {
      await this.resolve(record, fallback(record), { typed: message.text });
      return "answered";
    }
    const answer2 = matchOption(record, message.text) ?? (this.hinted.has(record.id) ? message.text.trim() : void 0);
    if (answer2 === void 0) {
      this.hinted.add(record.id);
      const hint = `Please answer with one of: ${record.options.map((option, i) => `${i + 1}. ${option}`).join(" \xB7 ")}`;
      await this.outbox.add(message.conversation, hint, `hint:${message.eventId ?? newId()}`, { history: [{ id: newId(), conversation: message.conversation, role: "user", text: message.text }] });
      return "hint";
    }
    await this.resolve(record, { answer: answer2, source: "user" }, { typed: message.text });
    return "answered";
  }
  /** Closes a conversation's open ask_user question without an answer: a fresh Teller session
   *  was started, and the old one's call will never be resumed. */
  async dismiss(conversation) {
    const record = this.openIn(conversation, "ask_user");
    if (record) await this.close(record, "(no longer needed)");
  }
  /** Only open questions are kept in memory; a closed one is read from the store when its
   *  call is replayed (ask), and a press of its button finds nothing open (stale). */
  track(record) {
    if (record.status === "open") {
      this.records.set(record.id, record);
      this.byOrigin.set(record.origin, record);
    } else {
      this.records.delete(record.id);
      this.byOrigin.delete(record.origin);
    }
  }
  arm(record) {
    if (this.stopped) return;
    const left = Date.parse(record.deadline) - Date.now();
    const timer = setTimeout(() => {
      this.timers.delete(record.id);
      const current = this.records.get(record.id);
      if (current?.status !== "open") return;
      if (Date.parse(current.deadline) > Date.now()) return this.arm(current);
      this.resolve(current, fallback(current)).catch((error) => this.log.error({ err: error, question: current.id }, "could not expire a question"));
    }, Math.max(0, Math.min(left, MAX_DELAY_MS2)));
    timer.unref();
    this.timers.set(record.id, timer);
  }
  /** Closes a question with its answer and resumes whoever waits for it. */
  async resolve(record, answer2, { typed, superseded = false } = {}) {
    const status = superseded ? "superseded" : answer2.source === "user" ? "answered" : "expired";
    const note = superseded ? "(replaced by a newer question)" : outcomeText(answer2);
    const closed = { ...record, status, ...answer2, closedAt: (/* @__PURE__ */ new Date()).toISOString() };
    this.hinted.delete(record.id);
    const edit = this.outbox.prepare(record.conversation, { text: closedText(record.question, note) }, `question-closed:${record.id}`, record.messageId);
    const event = record.purpose === "ask_user" ? { id: newId(), conversation: record.conversation, user: record.user, kind: "answer", text: answer2.answer, createdAt: (/* @__PURE__ */ new Date()).toISOString(), attempts: 0 } : void 0;
    const typedLine = typed !== void 0 ? [{ id: newId(), conversation: record.conversation, role: "user", text: typed }] : [];
    await this.store.save({ questions: [closed], outbox: [edit], events: event ? [event] : [], history: typedLine });
    this.finishClose(closed, edit);
    if (event) this.wake(event);
    this.waiters.get(record.id)?.(answer2);
    this.waiters.delete(record.id);
  }
  /** Closes a question nobody waits for any more (its run was aborted, its session replaced). */
  async close(record, note) {
    const closed = { ...record, status: "closed", closedAt: (/* @__PURE__ */ new Date()).toISOString() };
    const edit = this.outbox.prepare(record.conversation, { text: closedText(record.question, note) }, `question-closed:${record.id}`, record.messageId);
    await this.store.save({ questions: [closed], outbox: [edit] });
    this.finishClose(closed, edit);
  }
  finishClose(closed, edit) {
    this.track(closed);
    clearTimeout(this.timers.get(closed.id));
    this.timers.delete(closed.id);
    this.outbox.commit(edit);
    this.log.info({ question: closed.id, status: closed.status, source: closed.source }, "question closed");
  }
};
function fallback(record) {
  return record.default !== void 0 ? { answer: record.default, source: "default" } : { answer: "", source: "timeout" };
}
function buttonsOf(questionId, options) {
  return options?.map((label, i) => ({ id: `${questionId}:${i}`, label }));
}
function questionText(question) {
  const fallback2 = question.default !== void 0 ? `_If there is no answer in ${duration(question.timeout)}, I will go with \u201C${question.default}\u201D._` : void 0;
  return fallback2 ? `${question.question}

${fallback2}` : question.question;
}
var CLOSED_QUESTION_CHARS = 1e3;
function closedText(question, note) {
  const shown = question.length > CLOSED_QUESTION_CHARS ? `${question.slice(0, CLOSED_QUESTION_CHARS).trimEnd()}\u2026` : question;
  return `${shown}

${note}`;
}
function outcomeText(answer2) {
  if (answer2.source === "user") return `Answer: ${answer2.answer}`;
  return answer2.source === "default" ? `No answer \u2014 used default: ${answer2.answer}` : "No answer";
}
function matchOption(record, text) {
  if (!record.options) return text;
  const typed = text.trim().toLowerCase();
  const byNumber = /^\d+$/.test(typed) ? record.options[Number(typed) - 1] : void 0;
  return byNumber ?? record.options.find((option) => option.toLowerCase() === typed);
}
function duration(seconds) {
  if (seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}

// src/memory/edit.ts
init_envelope();
import { readFile as readFile3, unlink, writeFile as writeFile2 } from "node:fs/promises";
import path5 from "node:path";

// src/memory/notes.ts
import { readdir as readdir3, readFile as readFile2, stat as stat2 } from "node:fs/promises";
import path4 from "node:path";

// src/memory/dates.ts
var pad = (n, width = 2) => String(n).padStart(width, "0");
function localDay(date) {
  return `${pad(date.getFullYear(), 4)}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}
function isCalendarDay(day) {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) return false;
  const date = /* @__PURE__ */ new Date(`${day}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(day);
}

// src/memory/chunk.ts
init_text();
var MAX_CHUNK_TOKENS = 400;
var HEADING = /^(#{1,6})[ \t]+(.*?)[ \t#]*$/;
var FENCE = /^\s{0,3}(```|~~~)/;
var sentences = new Intl.Segmenter(void 0, { granularity: "sentence" });
function chunkMarkdown(markdown) {
  const sections = [];
  let current = { heading: "", lines: [] };
  let dated;
  let fenced = false;
  for (const line of markdown.split(/\r?\n/)) {
    if (FENCE.test(line)) fenced = !fenced;
    const heading = fenced ? null : HEADING.exec(line);
    if (!heading) {
      current.lines.push(line);
      continue;
    }
    sections.push(current);
    const level = heading[1].length;
    const day = heading[2].slice(0, 10);
    if (isCalendarDay(day) && !/\d/.test(heading[2].charAt(10))) dated = { level, date: day };
    else if (dated && level < dated.level) dated = void 0;
    current = { heading: line.trim(), lines: [], date: dated?.date };
  }
  sections.push(current);
  const filled = sections.filter((s) => s.lines.join("").trim() !== "");
  const kept = filled.length > 0 ? filled : sections.filter((s) => s.heading !== "");
  return kept.flatMap(splitSection);
}
function splitSection(section) {
  const body = section.lines.join("\n").trim();
  const whole = section.heading && body ? `${section.heading}

${body}` : section.heading || body;
  if (countTokens(whole) <= MAX_CHUNK_TOKENS) return [{ text: whole, date: section.date }];
  const budget = Math.max(MAX_CHUNK_TOKENS - countTokens(section.heading), MAX_CHUNK_TOKENS / 2);
  const pieces = body.split(/\n[ \t]*\n/).flatMap((paragraph) => fit(paragraph.trim(), budget));
  const chunks = [];
  let packed = [];
  let size = 0;
  const flush = () => {
    if (packed.length === 0) return;
    const text = packed.join("\n\n");
    chunks.push({ text: section.heading ? `${section.heading}

${text}` : text, date: section.date });
    packed = [];
    size = 0;
  };
  for (const piece of pieces) {
    const tokens = countTokens(piece);
    if (size + tokens > budget) flush();
    packed.push(piece);
    size += tokens;
  }
  flush();
  return chunks;
}
function fit(paragraph, budget) {
  if (paragraph === "") return [];
  if (countTokens(paragraph) <= budget) return [paragraph];
  const out = [];
  let run = "";
  for (const { segment } of sentences.segment(paragraph)) {
    if (countTokens(run + segment) <= budget) {
      run += segment;
      continue;
    }
    if (run.trim()) out.push(run.trim());
    run = "";
    let rest = segment;
    for (let cut = tokenBoundary(rest, budget); cut !== void 0; cut = tokenBoundary(rest, budget)) {
      out.push(rest.slice(0, cut).trim());
      rest = rest.slice(cut);
    }
    run = rest;
  }
  if (run.trim()) out.push(run.trim());
  return out;
}

// src/memory/notes.ts
var LONG_TERM_FILE = "memory.md";
var DAILY_FOLDER = "memory";
var DAILY_NAME = /^(\d{4}-\d{2}-\d{2})-/;
function isNoteName(name) {
  return name.endsWith(".md") && !name.startsWith(".");
}
async function listNotes(dir) {
  const [top, daily] = await Promise.all([names(dir), names(path4.join(dir, DAILY_FOLDER))]);
  return [...top, ...daily.map((name) => `${DAILY_FOLDER}/${name}`)];
}
async function names(dir) {
  const entries = await readdir3(dir, { withFileTypes: true }).catch(ifMissing([]));
  return entries.filter((entry) => entry.isFile() && isNoteName(entry.name)).map((entry) => entry.name);
}
async function statNote(dir, source) {
  const stats = await stat2(path4.join(dir, source)).catch(ifMissing(void 0));
  return stats?.isFile() ? { mtimeMs: stats.mtimeMs, size: stats.size } : void 0;
}
async function readNote(dir, source) {
  const stamp = await statNote(dir, source);
  if (!stamp) return void 0;
  const markdown = await readFile2(path4.join(dir, source), "utf8").catch(ifMissing(void 0));
  if (markdown === void 0) return void 0;
  const chunks = chunkMarkdown(markdown).map((chunk) => ({ source, date: noteDate(source, chunk.date, stamp), text: chunk.text }));
  return { source, stamp, chunks };
}
async function readChunks(dir) {
  const notes = await Promise.all((await listNotes(dir)).map((source) => readNote(dir, source)));
  return notes.flatMap((note) => note?.chunks ?? []);
}
function noteDate(source, heading, stamp) {
  const named = DAILY_NAME.exec(path4.basename(source))?.[1];
  if (named && isCalendarDay(named)) return named;
  return heading ?? localDay(new Date(stamp.mtimeMs));
}
function ifMissing(value) {
  return (error) => {
    if (error.code === "ENOENT" || error.code === "ENOTDIR" || error.code === "EISDIR") return value;
    throw error;
  };
}

// src/memory/supersede.ts
init_language();

// src/memory/facts.ts
var WHEN = "when";
var SLOTS2 = {
  address: {
    words: "address|home address|live|lives|living|residence|we moved|i moved|moved to|moved into|moving to|moved house|new home|our place|my place|wohne|wohnen|wohnt|umgezogen",
    parts: "adresse|anschrift|wohnort|umzug",
    zh: "\u5730\u5740|\u4F4F\u5740|\u4F4F\u5728|\u642C\u5230|\u642C\u5BB6"
  },
  phone: { words: "phone|phone number|telephone|new number|neue nummer", parts: "telefon|rufnummer", zh: "\u7535\u8BDD|\u53F7\u7801|\u65B0\u53F7" },
  mobile: { words: "mobile|mobile number|mobile phone|cell|cellphone|cell phone|handy", parts: "handynummer|mobilnummer|mobilfunk", zh: "\u624B\u673A" },
  landline: { words: "landline|home phone", parts: "festnetz|telefonanschluss", zh: "\u5EA7\u673A|\u56FA\u8BDD" },
  email: { words: "email|e-mail|mail|email address|e-mail address|inbox", parts: "mailadresse", zh: "\u90AE\u7BB1|\u90AE\u4EF6|\u7535\u90AE" },
  manager: { words: "manager|boss|supervisor|line manager|team lead|reports to|chef|chefin", parts: "vorgesetzt|teamleit", zh: "\u7ECF\u7406|\u9886\u5BFC|\u4E0A\u53F8|\u8001\u677F|\u4E3B\u7BA1" },
  employer: { words: "job|employer|company|hired|works at|work at|firma|angestellt", parts: "arbeitgeber|arbeitsstelle", zh: "\u5DE5\u4F5C|\u516C\u53F8|\u4E0A\u73ED" },
  role: { words: "role|position|job title|title", parts: "berufsbezeichnung", zh: "\u804C\u4F4D|\u804C\u52A1|\u5934\u8854" },
  dentist: { words: "dentist|dental", parts: "zahnarzt|zahn\xE4rzt", zh: "\u7259\u533B|\u7259\u79D1" },
  doctor: { words: "doctor|family doctor|gp|physician|arzt|\xE4rztin", parts: "hausarzt|haus\xE4rzt", zh: "\u533B\u751F|\u5BB6\u5EAD\u533B\u751F" },
  paediatrician: { words: "paediatrician|pediatrician", parts: "kinderarzt|kinder\xE4rzt", zh: "\u513F\u79D1" },
  wifi: { words: "wifi|wi-fi|wlan|wireless|router|password|network|passwort", parts: "wlan", zh: "\u65E0\u7EBF|\u7F51\u7EDC|\u5BC6\u7801" },
  internet: { words: "internet|broadband|dsl|internet contract", parts: "internet|glasfaser", zh: "\u5BBD\u5E26" },
  gym: { words: "gym|fitness|train at", parts: "fitnessstudio", zh: "\u5065\u8EAB" },
  car: { words: "car|vehicle|licence plate|license plate|registration|auto", parts: "kennzeichen", zh: "\u8F66\u724C|\u6C7D\u8F66" },
  rent: { words: "rent|monthly rent|miete", parts: "kaltmiete|warmmiete", zh: "\u623F\u79DF|\u79DF\u91D1" },
  salary: { words: "salary|paycheck|wage|wages|salary account|bank account|current account|iban|gehalt", parts: "girokonto", zh: "\u5DE5\u8D44|\u85AA\u6C34" },
  hairdresser: { words: "hairdresser|hair|haircut|barber|salon", parts: "friseur|fris\xF6r", zh: "\u7406\u53D1|\u53D1\u578B" },
  restaurant: { words: "restaurant|favourite restaurant|favorite restaurant|eat out|place to eat", parts: "lieblingslokal|restaurant", zh: "\u9910\u5385|\u996D\u5E97|\u9986\u5B50" },
  school: { words: "school|kindergarten|daycare|nursery|kita", parts: "kita|kindergarten|schule", zh: "\u5E7C\u513F\u56ED|\u5B66\u6821" },
  insurance: { words: "insurance|insurer", parts: "versicherung", zh: "\u4FDD\u9669" },
  bank: { words: "bank", zh: "\u94F6\u884C" },
  landlord: { words: "landlord|landlady|property manager", parts: "vermieter|hausverwaltung", zh: "\u623F\u4E1C" },
  // A change used as a point in time ("since we moved, …"): it takes its words and names no slot.
  [WHEN]: { words: "since we moved|after we moved|since moving|after moving|before we moved|seit dem umzug|nach dem umzug|vor dem umzug", zh: "\u642C\u5BB6\u4EE5\u540E|\u642C\u5BB6\u540E" }
};
var BROADER = { mobile: "phone", landline: "phone" };
var UPDATE_EN = /\b(?:new|now|moved|switched|changed|no longer|anymore|instead|replaced|since|from now on|these days|started|sold|cancell?ed)\b/i;
var UPDATE_DE = /\b(?:neu|neue|neuer|neues|neuen|jetzt|nun|seit|umgezogen|gewechselt|geändert|nicht mehr|stattdessen|ab sofort|gekündigt)\b/i;
var UPDATE_ZH = /新|现在|搬|换|改成|改为|不再|以后/;
var OWNER = new RegExp("(\\p{Lu}\\p{Ll}+)['\u2019]s\\b|\\b(\\p{Lu}\\p{Ll}+)s\\s+(?=\\p{Lu}\\p{Ll})|\\b(?:for|f\xFCr)\\s+(\\p{Lu}\\p{Ll}+)\\b|(?<!\u5728)(\\p{Lu}\\p{Ll}+)\u7684", "gu");
var NAME2 = new RegExp("\\p{Lu}\\p{Ll}+", "gu");
var SELF = "";
var escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
var SLOT_OF = /* @__PURE__ */ new Map();
var ALTERNATIVES = [];
for (const [slot, { words, parts = "", zh = "" }] of Object.entries(SLOTS2)) {
  for (const word of words.split("|")) ALTERNATIVES.push({ word, pattern: `(?<![\\p{L}\\p{N}])${escape(word)}(?:e?s)?(?![\\p{L}\\p{N}])` });
  for (const word of [...parts.split("|"), ...zh.split("|")].filter(Boolean)) ALTERNATIVES.push({ word, pattern: escape(word) });
  for (const word of [...words.split("|"), ...parts.split("|"), ...zh.split("|")].filter(Boolean)) SLOT_OF.set(word, slot);
}
var LEXICON = new RegExp(
  ALTERNATIVES.sort((a, b) => b.word.length - a.word.length).map(({ pattern }) => pattern).join("|"),
  "giu"
);
function slotsOf(text) {
  const slots = [];
  for (const match2 of text.matchAll(LEXICON)) {
    const found = match2[0].toLowerCase();
    const slot = SLOT_OF.get(found) ?? SLOT_OF.get(found.replace(/e?s$/, "")) ?? SLOT_OF.get(found.replace(/s$/, ""));
    for (const named of [slot, slot && BROADER[slot]]) if (named && named !== WHEN && !slots.includes(named)) slots.push(named);
  }
  return slots;
}
function announcesChange(text) {
  return UPDATE_EN.test(text) || UPDATE_DE.test(text) || UPDATE_ZH.test(text);
}
function factOf(text) {
  const slots = slotsOf(text);
  if (slots.length === 0) return void 0;
  const owners = /* @__PURE__ */ new Set();
  for (const match2 of text.matchAll(OWNER)) owners.add((match2[1] ?? match2[2] ?? match2[3] ?? match2[4]).toLowerCase());
  const mentions = new Set(Array.from(text.matchAll(NAME2), (match2) => match2[0].toLowerCase()));
  const owned = owners.size > 0 ? [...owners] : [SELF];
  if (owners.size === 0) mentions.add(SELF);
  return { slots, owners: owned, mentions, update: announcesChange(text) };
}

// src/memory/supersede.ts
function updatesOf(chunks) {
  const updates = [];
  for (const chunk of chunks) {
    const fact = announcesChange(chunk.text) ? factOf(chunk.text) : void 0;
    if (fact) updates.push({ source: chunk.source, date: chunk.date, text: chunk.text, fact });
  }
  return updates;
}
function supersedes(newer, older) {
  return newer.date > older.date && aboutSame(older.fact.slots[0], newer.fact.slots) && older.fact.owners.every((owner) => newer.fact.mentions.has(owner));
}
function aboutSame(slot, newer) {
  if (newer.includes(slot)) return true;
  const broader = BROADER[slot];
  return broader !== void 0 && newer.includes(broader) && !newer.some((other) => BROADER[other] === broader);
}
var Supersession = class {
  /** Updates by slot, newest first. */
  bySlot = /* @__PURE__ */ new Map();
  constructor(updates) {
    for (const update of [...updates].sort(newestFirst)) {
      for (const slot of update.fact.slots) this.bySlot.set(slot, [...this.bySlot.get(slot) ?? [], update]);
    }
  }
  get size() {
    return new Set([...this.bySlot.values()].flat()).size;
  }
  /**
   * The note that states `chunk`'s fact now (within the asked window); undefined when nothing
   * replaced it. Among several notes that replaced it (the same change written in two
   * languages), the newest in the question's language, else in the old note's, else the
   * newest. The newest is the end of the chain: a change to a change names the slot too.
   */
  currentOf(chunk, { after, before, query }) {
    if (this.bySlot.size === 0) return void 0;
    const fact = factOf(chunk.text);
    if (!fact) return void 0;
    const older = { ...chunk, fact };
    const slot = fact.slots[0];
    const filed = [...this.bySlot.get(slot) ?? [], ...BROADER[slot] ? this.bySlot.get(BROADER[slot]) ?? [] : []];
    const candidates = [...new Set(filed)].sort(newestFirst).filter(
      (update) => (!after || update.date >= after) && (!before || update.date <= before) && !(update.source === chunk.source && update.text === chunk.text) && supersedes(update, older)
    );
    if (candidates.length <= 1) return candidates[0];
    for (const language of [writtenIn(query), writtenIn(chunk.text)]) {
      const same = candidates.find((update) => writtenIn(update.text) === language);
      if (same) return same;
    }
    return candidates[0];
  }
};
var newestFirst = (a, b) => a.date < b.date ? 1 : a.date > b.date ? -1 : 0;
var HAN = new RegExp("\\p{sc=Han}", "u");
function writtenIn(text) {
  return HAN.test(text) ? "zh" : detectLanguage(text);
}
function chainsOf(chunks) {
  const supersession = new Supersession(updatesOf(chunks));
  const chains = /* @__PURE__ */ new Map();
  for (const chunk of chunks) {
    const current = supersession.currentOf(chunk, { query: chunk.text });
    if (!current) continue;
    const key = `${current.source}\0${current.date}`;
    const chain = chains.get(key) ?? { slot: factOf(chunk.text).slots[0], notes: [{ source: current.source, date: current.date }] };
    if (!chain.notes.some((note) => note.source === chunk.source && note.date === chunk.date)) chain.notes.push({ source: chunk.source, date: chunk.date });
    chains.set(key, chain);
  }
  for (const chain of chains.values()) chain.notes.sort((a, b) => newestFirst(b, a));
  return [...chains.values()].sort((a, b) => newestFirst(a.notes.at(-1), b.notes.at(-1)));
}

// src/memory/edit.ts
var SNAPSHOT_BYTES = 8 * 1024;
var OVERVIEW_CHARS = 3500;
var OVERVIEW_NOTES = 5;
var OVERVIEW_CHAINS = 5;
var MIN_QUERY = 3;
function newest(text, bytes) {
  const buffer = Buffer.from(text, "utf8");
  if (buffer.length <= bytes) return { text, cut: false };
  const tail = buffer.subarray(buffer.length - bytes).toString("utf8");
  return { text: tail.slice(tail.indexOf("\n") + 1), cut: true };
}
async function memorySnapshot(folder) {
  const note = (await readIfAny(path5.join(folder, LONG_TERM_FILE))).trim();
  if (note === "") return "";
  const { text, cut } = newest(note, SNAPSHOT_BYTES);
  return [
    "<memory>",
    "What this user asked you to remember (memory.md; newest last). Use it; the `forget` tool corrects or removes it.",
    ...cut ? ["(older entries left out)"] : [],
    // Notes are a model's words (a remember call): data, never instructions.
    untrusted("memory.md", text, { stable: true }),
    "</memory>"
  ].join("\n");
}
async function memoryOverview(folder) {
  const notes = await listNotes(folder);
  const long = (await readIfAny(path5.join(folder, LONG_TERM_FILE))).trim();
  const daily = notes.filter((source) => source.startsWith(`${DAILY_FOLDER}/`)).sort().reverse().slice(0, OVERVIEW_NOTES);
  if (long === "" && daily.length === 0) return "I have no notes about you yet.";
  const parts = [];
  if (long !== "") {
    const { text, cut } = newest(long, OVERVIEW_CHARS / 2);
    parts.push(`*memory.md*${cut ? " (newest part)" : ""}:
${text}`);
  }
  if (daily.length > 0) {
    const lines = await Promise.all(daily.map(async (source) => `\u2022 ${source}: ${firstLine(await readIfAny(path5.join(folder, source)))}`));
    parts.push(`*Latest notes*:
${lines.join("\n")}`);
  }
  const chains = chainsOf(await readChunks(folder)).slice(0, OVERVIEW_CHAINS);
  if (chains.length > 0) {
    const lines = chains.map(({ slot, notes: notes2 }) => `\u2022 ${slot}: ${notes2.map((note) => `${note.source} (${note.date})`).join(" \u2192 ")}, the last is current`);
    parts.push(`*Facts that changed* (older notes stay as history):
${lines.join("\n")}`);
  }
  parts.push('To correct or remove something, tell me (e.g. "forget that I live in Berlin").');
  const overview = parts.join("\n\n");
  return overview.length > OVERVIEW_CHARS ? `${overview.slice(0, OVERVIEW_CHARS - 1)}\u2026` : overview;
}
async function forgetNotes(folder, request) {
  if (request.query === void 0 === (request.path === void 0)) return { error: "give exactly one of query (text to find) or path (a note)" };
  const notes = await listNotes(folder);
  const chains = chainsOf(await readChunks(folder));
  const withChain = (change) => {
    const chain = chains.find((candidate) => candidate.notes.some((note) => note.source === change.path));
    return chain ? { ...change, chain: chain.notes.map(({ source, date }) => ({ path: source, date })) } : change;
  };
  const result2 = await forget(folder, notes, request);
  return "error" in result2 ? result2 : { changes: result2.changes.map(withChain) };
}
async function forget(folder, notes, request) {
  const { query, replacement } = request;
  if (request.path !== void 0) {
    const source = path5.posix.normalize(request.path.replaceAll("\\", "/"));
    if (!notes.includes(source)) return { error: `no note "${request.path}"; notes look like memory.md or ${DAILY_FOLDER}/YYYY-MM-DD-<slug>.md` };
    const file = path5.join(folder, source);
    const removed = (await readIfAny(file)).split("\n").filter((line) => line.trim() !== "");
    if (replacement?.trim()) {
      await writeFile2(file, `${replacement.trim()}
`);
      return { changes: [{ path: source, removed, added: replacement.trim() }] };
    }
    await unlink(file);
    return { changes: [{ path: source, removed, deleted: true }] };
  }
  const needle = query.trim().toLowerCase();
  if (needle.length < MIN_QUERY) return { error: `query must be at least ${MIN_QUERY} characters, so it does not match more than you mean` };
  const changes = [];
  for (const source of notes) {
    const file = path5.join(folder, source);
    const lines = (await readIfAny(file)).split("\n");
    const removed = [];
    let added;
    const kept = [];
    for (const line of lines) {
      if (line.startsWith("#") || !line.toLowerCase().includes(needle)) kept.push(line);
      else {
        removed.push(line);
        if (replacement?.trim() && added === void 0) kept.push(added = replacement.trim());
      }
    }
    if (removed.length === 0) continue;
    const text = withoutEmptySections(kept.join("\n"));
    if (text.trim() === "" && source !== LONG_TERM_FILE) {
      await unlink(file);
      changes.push({ path: source, removed, deleted: true });
    } else {
      await writeFile2(file, text.trim() === "" ? "" : `${text.trim()}
`);
      changes.push({ path: source, removed, added });
    }
  }
  return { changes };
}
function withoutEmptySections(text) {
  const sections = text.split(/(?=^## )/m);
  return sections.filter((section) => !section.startsWith("## ") || section.split("\n").slice(1).some((line) => line.trim() !== "")).join("");
}
function firstLine(text) {
  const line = text.split("\n").find((l) => l.trim() !== "" && !l.startsWith("#"))?.trim() ?? "";
  return line.length > 120 ? `${line.slice(0, 119)}\u2026` : line;
}
async function readIfAny(file) {
  return readFile3(file, "utf8").catch((error) => {
    if (error.code === "ENOENT") return "";
    throw error;
  });
}

// src/schedule/scheduler.ts
init_condition();

// src/schedule/due-times.ts
init_timer();

// src/schedule/cadence.ts
function intervalCadence(anchor, seconds) {
  const step = seconds * 1e3;
  const start = anchor.getTime();
  return {
    nextAfterNow() {
      const now2 = Date.now();
      return new Date(now2 < start ? start : start + (Math.floor((now2 - start) / step) + 1) * step);
    },
    latest(from, to) {
      if (to.getTime() < start) return void 0;
      const last = start + Math.floor((to.getTime() - start) / step) * step;
      return last >= from.getTime() ? new Date(last) : void 0;
    }
  };
}
function onceCadence(at2) {
  return {
    nextAfterNow: () => at2.getTime() > Date.now() ? at2 : void 0,
    latest: (from, to) => at2 >= from && at2 <= to ? at2 : void 0
  };
}
function cronCadence(schedule) {
  return {
    nextAfterNow: () => schedule.next(/* @__PURE__ */ new Date()),
    latest: (from, to) => schedule.latest(from, to)
  };
}

// src/schedule/trigger-changes.ts
init_cron();
function cadenceFor(trigger) {
  if (trigger.cron) {
    const read = parseCron(trigger.cron, trigger.timezone);
    if ("error" in read) throw new Error(read.error);
    return cronCadence(read.schedule);
  }
  if (trigger.interval) return intervalCadence(new Date(trigger.createdAt), trigger.interval);
  return onceCadence(new Date(trigger.runAt));
}
function pausedTrigger(trigger) {
  if (trigger.status === "paused") return `schedule ${trigger.id} is already paused`;
  if (trigger.status !== "active") return `schedule ${trigger.id} has ${trigger.status}; only an active schedule can be paused`;
  return { ...trigger, status: "paused", nextRunAt: void 0, cooldownUntil: void 0 };
}
function resumedTrigger(trigger, now2 = /* @__PURE__ */ new Date()) {
  if (trigger.status !== "paused") return `schedule ${trigger.id} is not paused`;
  if (trigger.kind === "conditional") return { ...trigger, status: "active", since: now2.toISOString(), cooldownUntil: void 0 };
  const next = cadenceFor(trigger).nextAfterNow();
  if (!next) return { ...trigger, status: "ended", endReason: "its time passed while it was paused", nextRunAt: void 0 };
  return { ...trigger, status: "active", nextRunAt: next.toISOString() };
}
function editedTrigger(trigger, request, now2 = /* @__PURE__ */ new Date()) {
  if (trigger.status !== "active" && trigger.status !== "paused") return `schedule ${trigger.id} has ${trigger.status}; create a new one instead`;
  const edited = {
    ...trigger,
    kind: request.type,
    prompt: request.prompt,
    interval: request.interval,
    cron: request.cron,
    timezone: request.timezone,
    runAt: request.runAt,
    condition: request.condition,
    since: request.type === "conditional" ? now2.toISOString() : void 0,
    cooldown: request.cooldown ?? 0,
    cooldownUntil: void 0,
    timeout: request.timeout ?? null,
    onMissed: request.onMissed ?? trigger.onMissed,
    maxLateness: request.maxLateness ?? trigger.maxLateness,
    target: request.target,
    quiet: request.quiet,
    nextRunAt: void 0
  };
  if (edited.status === "active" && edited.kind !== "conditional") {
    const next = cadenceFor(edited).nextAfterNow();
    if (!next) return "the new schedule has no due time left";
    edited.nextRunAt = next.toISOString();
  }
  return edited;
}

// src/schedule/due-times.ts
var ON_TIME_MS = 6e4;
var DueTimes = class {
  constructor(deps) {
    this.deps = deps;
  }
  deps;
  cadences = /* @__PURE__ */ new Map();
  /** Cancels what a trigger waits on: its timer or cooldown. */
  stops = /* @__PURE__ */ new Map();
  /** Makes an active trigger wait for its next due time or condition; stops an ended one. */
  arm(trigger) {
    if (trigger.status !== "active") return this.disarm(trigger.id);
    this.stops.get(trigger.id)?.();
    this.stops.delete(trigger.id);
    if (trigger.kind === "conditional") {
      const listen = () => this.listen(trigger.id);
      if (trigger.cooldownUntil && Date.parse(trigger.cooldownUntil) > Date.now()) this.stops.set(trigger.id, timerAt(new Date(trigger.cooldownUntil), listen));
      else listen();
      return;
    }
    this.stops.set(trigger.id, timerAt(new Date(trigger.nextRunAt), () => this.deps.background(() => this.timerDue(trigger.id))));
  }
  disarm(id) {
    this.stops.get(id)?.();
    this.stops.delete(id);
    this.cadences.delete(id);
    this.deps.waits.unwatchTrigger(id);
  }
  disarmAll() {
    for (const id of [...this.stops.keys()]) this.disarm(id);
  }
  /** The trigger's first due time after now; none when it will not be due again. */
  nextAfterNow(trigger) {
    return this.cadenceOf(trigger).nextAfterNow();
  }
  /** An active trigger at start-up: a due time that passed while Steward was down is handled
   *  as missed — once, for the latest due time within maxLateness — then the next one armed. */
  async catchUp(trigger) {
    const now2 = Date.now();
    if (trigger.kind !== "conditional" && trigger.nextRunAt && Date.parse(trigger.nextRunAt) <= now2) {
      const from = new Date(Math.max(Date.parse(trigger.nextRunAt), now2 - trigger.maxLateness * 1e3));
      const slot = this.cadenceOf(trigger).latest(from, new Date(now2)) ?? new Date(trigger.nextRunAt);
      await this.deps.onDue(trigger.id, slot, true);
    }
    this.arm(this.deps.table.get(trigger.id));
  }
  async timerDue(id) {
    const trigger = this.deps.table.get(id);
    if (!trigger?.nextRunAt || trigger.status !== "active") return;
    const slot = this.cadenceOf(trigger).latest(new Date(trigger.nextRunAt), /* @__PURE__ */ new Date());
    if (slot) await this.deps.onDue(id, slot, false);
    else this.arm(trigger);
  }
  listen(id) {
    const trigger = this.deps.table.get(id);
    if (trigger?.status !== "active") return;
    this.deps.waits.watchTrigger(id, {
      condition: trigger.condition,
      since: trigger.since,
      onResult: (result2) => {
        const at2 = /* @__PURE__ */ new Date();
        this.deps.background(() => this.deps.onDecided(id, result2, at2));
      }
    });
  }
  /** Where a new schedule kind is chosen (the interface in cadence.ts). */
  cadenceOf(trigger) {
    let cadence = this.cadences.get(trigger.id);
    if (!cadence) {
      cadence = cadenceFor(trigger);
      this.cadences.set(trigger.id, cadence);
    }
    return cadence;
  }
};
function dueOutcome(trigger, late, afterDowntime) {
  if (!afterDowntime && late <= ON_TIME_MS) return "fired";
  return trigger.onMissed === "run-once" && late <= trigger.maxLateness * 1e3 ? "missed_run" : "missed_skipped";
}

// src/schedule/firings.ts
init_types();
var Firings = class {
  store;
  table;
  host;
  log;
  onFiring;
  constructor(deps) {
    this.store = deps.store;
    this.table = deps.table;
    this.host = deps.host;
    this.log = deps.log;
    this.onFiring = deps.onFiring;
  }
  /**
   * Records a firing together with the trigger's new state, then starts its run. A firing that
   * would run while the trigger's previous run is still under way is skipped (overlap).
   */
  async fire(trigger, scheduledFor, outcome, missedFrom) {
    const runs = (outcome === "fired" || outcome === "missed_run") && trigger.runningFiringId === void 0;
    const firing = {
      id: `${trigger.id}/${newId()}`,
      triggerId: trigger.id,
      scheduledFor: scheduledFor.toISOString(),
      at: (/* @__PURE__ */ new Date()).toISOString(),
      outcome: outcome === "missed_skipped" || runs ? outcome : "skipped_overlap",
      missedFrom,
      status: runs ? "fired" : "skipped"
    };
    const update = { ...trigger, lastFiringId: firing.id, lastOutcome: firing.outcome };
    if (runs) Object.assign(update, { lastFiredAt: firing.at, runningFiringId: firing.id, runningTaskId: void 0 });
    await this.table.save(update, firing);
    this.onFiring?.(firing.status);
    this.log.info({ trigger: trigger.id, firing: firing.id, outcome: firing.outcome, scheduledFor: firing.scheduledFor }, "trigger due");
    if (runs) await this.startRun(update, firing);
    return firing;
  }
  /**
   * The trigger's run ended (or could not start): its firing is "ran" or "failed", and the
   * trigger may fire again. A failure reaches the owner one way or another: `reported` — its
   * task's report goes to the report conversation, and the owner is told besides when that is
   * another one; `lost` — no report will come, so the owner is told; `told` — the caller did.
   */
  async runEnded(trigger, status, error, failure = "reported") {
    const firing = await this.store.schedules.firing(trigger.runningFiringId);
    const ok = status === "completed";
    const reason = error ?? `the run ended ${status}`;
    const ended = firing && (firing.status === "delivered" ? firing : { ...firing, status: ok ? "ran" : "failed", error: ok ? void 0 : reason });
    await this.table.save({ ...trigger, runningFiringId: void 0, runningTaskId: void 0, lastOutcome: ended?.status ?? trigger.lastOutcome }, ended);
    if (ended && ended !== firing) this.onFiring?.(ended.status);
    if (ok || failure === "told") return;
    const elsewhere = trigger.target !== void 0 && trigger.target !== trigger.conversation;
    if (failure === "reported" && !elsewhere) return;
    const where = failure === "reported" ? ` Its report went to ${trigger.target}.` : "";
    await this.tell(trigger, `A run of the schedule ${trigger.id} (\u201C${trigger.prompt.slice(0, 80)}\u201D) failed: ${reason}.${where}`);
  }
  /** Records a change to a firing (its report's delivery) and the trigger's last outcome. */
  async update(firingId, change) {
    const firing = await this.store.schedules.firing(firingId);
    if (!firing) return void this.log.warn({ firing: firingId }, "report of an unknown firing");
    const update = change(firing);
    const trigger = await this.table.find(firing.triggerId);
    await this.table.save(trigger && { ...trigger, lastOutcome: update.nothingToReport ? "ran, nothing to report" : update.status }, update);
    if (update.status !== firing.status) this.onFiring?.(update.status);
  }
  /** A run that was under way at the last stop: started again if it was recorded but its task
   *  may not exist yet (the host's startRun is idempotent), ended if its task ended meanwhile. */
  async resumeRun(trigger) {
    if (!trigger.runningFiringId) return;
    if (!trigger.runningTaskId) {
      const firing = await this.store.schedules.firing(trigger.runningFiringId);
      if (firing) return this.startRun(trigger, firing);
      return this.runEnded(trigger, "failed", "its firing record was lost", "lost");
    }
    const status = this.host.taskStatus(trigger.runningTaskId);
    if (status === void 0) await this.runEnded(trigger, "failed", "its task was lost", "lost");
    else if (TERMINAL.has(status)) await this.runEnded(trigger, status);
  }
  /** Tells the owner that a missed due time was skipped. */
  tellSkipped(trigger, firing) {
    const since = firing.missedFrom ? ` (and every due time since ${firing.missedFrom})` : "";
    return this.tell(
      trigger,
      `The schedule ${trigger.id} (\u201C${trigger.prompt.slice(0, 80)}\u201D) was due at ${firing.scheduledFor}${since} while Steward was not running (or asleep). That run was skipped: too late to catch up (onMissed ${trigger.onMissed}, maxLateness ${trigger.maxLateness} s).`
    );
  }
  async tell(trigger, text) {
    await this.host.notify(trigger, text).catch((error) => this.log.error({ err: error, trigger: trigger.id }, "could not tell a trigger's owner"));
  }
  async startRun(trigger, firing) {
    let taskId;
    try {
      taskId = await this.host.startRun(trigger, firing);
    } catch (error) {
      const reason = `its run could not be started: ${internalError(this.log, error, "could not start a trigger's run", { trigger: trigger.id, firing: firing.id })}`;
      await this.runEnded(trigger, "failed", reason, "told");
      return this.tell(trigger, `The schedule ${trigger.id} (\u201C${trigger.prompt.slice(0, 80)}\u201D) was due, but ${reason}.`);
    }
    await this.table.save({ ...this.table.get(trigger.id), runningTaskId: taskId }, { ...firing, taskId });
  }
};

// src/schedule/new-trigger.ts
init_tool();
init_request();
var DEFAULT_MAX_LATENESS_S = 3600;
function newTrigger(valid, where) {
  const late = valid.runAt === void 0 ? void 0 : runAtProblem(valid.runAt, where.askedAt === void 0 ? void 0 : new Date(where.askedAt));
  if (late) throw new ToolError(late);
  const now2 = (/* @__PURE__ */ new Date()).toISOString();
  return {
    id: newId(),
    conversation: where.conversation,
    user: where.user,
    kind: valid.type,
    prompt: valid.prompt,
    interval: valid.interval,
    cron: valid.cron,
    timezone: valid.timezone,
    runAt: valid.runAt,
    condition: valid.condition,
    since: valid.type === "conditional" ? now2 : void 0,
    cooldown: valid.cooldown ?? 0,
    timeout: valid.timeout ?? null,
    onMissed: valid.onMissed ?? "run-once",
    maxLateness: valid.maxLateness ?? DEFAULT_MAX_LATENESS_S,
    target: valid.target,
    quiet: valid.quiet,
    status: "active",
    createdAt: now2,
    origin: where.origin
  };
}

// src/schedule/scheduler.ts
init_request();

// src/schedule/serial.ts
var SerialChain = class {
  chain = Promise.resolve();
  run(op) {
    const next = this.chain.then(op);
    this.chain = next.catch(() => {
    });
    return next;
  }
  /** Resolves once no work is under way, including work queued while waiting. */
  async settled() {
    let seen2;
    do {
      seen2 = this.chain;
      await seen2;
    } while (seen2 !== this.chain);
  }
};

// src/schedule/trigger-table.ts
var TriggerTable = class {
  constructor(store) {
    this.store = store;
  }
  store;
  triggers = /* @__PURE__ */ new Map();
  byOrigin = /* @__PURE__ */ new Map();
  /** Reads the live triggers at start-up. */
  async load() {
    const live = await this.store.schedules.liveTriggers();
    for (const trigger of live) this.track(trigger);
    return live;
  }
  get(id) {
    return this.triggers.get(id);
  }
  all() {
    return [...this.triggers.values()];
  }
  /** A live trigger, or an ended one from the store. */
  async find(id) {
    return this.triggers.get(id) ?? await this.store.schedules.trigger(id);
  }
  /** The trigger a call created, if it did (a replay after a crash asks again). */
  async idOfOrigin(origin) {
    return this.byOrigin.get(origin) ?? (await this.store.schedules.triggerByOrigin(origin))?.id;
  }
  /** The trigger whose run is this task. */
  runningTask(taskId) {
    return this.all().find((trigger) => trigger.runningTaskId === taskId);
  }
  async save(trigger, firing) {
    await this.store.save({ triggers: trigger ? [trigger] : [], firings: firing ? [firing] : [] });
    if (trigger) this.track(trigger);
  }
  /** The conversation's active triggers, oldest first. A conditional trigger's next run is
   *  unknown, except that it is not before the end of its cooldown. */
  list(conversation) {
    const now2 = Date.now();
    return this.all().filter((trigger) => trigger.conversation === conversation && (trigger.status === "active" || trigger.status === "paused")).map((trigger) => ({
      id: trigger.id,
      kind: trigger.kind,
      prompt: trigger.prompt.slice(0, 100),
      user: trigger.user,
      nextRunAt: trigger.nextRunAt ?? (trigger.cooldownUntil && Date.parse(trigger.cooldownUntil) > now2 ? trigger.cooldownUntil : void 0),
      lastOutcome: trigger.lastOutcome,
      status: trigger.status,
      createdAt: trigger.createdAt
    }));
  }
  track(trigger) {
    this.triggers.set(trigger.id, trigger);
    this.byOrigin.set(trigger.origin, trigger.id);
  }
};

// src/schedule/waits.ts
init_types();
init_condition();

// src/schedule/events.ts
init_condition();
import { decodeTime as decodeTime3 } from "ulid";
var CLOCK_SLACK_MS = 1e4;
async function raiseEvent(store, name) {
  if (!EVENT_NAME.test(name)) throw new Error(`bad event name "${name}": 1-64 letters, digits, _ . -`);
  return store.schedules.raise(name);
}
var RaisedEvents = class {
  constructor(store) {
    this.store = store;
  }
  store;
  latest = /* @__PURE__ */ new Map();
  /** Ids taken within CLOCK_SLACK_MS of the newest, so the look-back does not take them twice. */
  recent = /* @__PURE__ */ new Set();
  newest = 0;
  async load() {
    for (const record of await this.store.schedules.raisedNames()) this.take(record);
    for (const record of await this.store.schedules.raisedSince(Math.max(0, this.newest - CLOCK_SLACK_MS))) this.take(record);
  }
  async raise(name) {
    this.take(await raiseEvent(this.store, name));
  }
  /** Takes events other processes wrote since the last look; true when there were any. */
  async poll() {
    const fresh = (await this.store.schedules.raisedSince(Math.max(0, this.newest - CLOCK_SLACK_MS))).filter((record) => !this.recent.has(record.id));
    for (const record of fresh) this.take(record);
    return fresh.length > 0;
  }
  raisedSince(name, since) {
    return (this.latest.get(name) ?? -Infinity) >= Date.parse(since);
  }
  take(record) {
    const at2 = Date.parse(record.at);
    this.latest.set(record.name, Math.max(at2, this.latest.get(record.name) ?? -Infinity));
    this.newest = Math.max(this.newest, decodeTime3(record.id));
    this.recent.add(record.id);
    for (const id of this.recent) if (decodeTime3(id) < this.newest - CLOCK_SLACK_MS) this.recent.delete(id);
  }
};

// src/schedule/watch.ts
init_condition();
init_timer();
var ConditionWatch = class {
  constructor(facts) {
    this.facts = facts;
  }
  facts;
  watchers = /* @__PURE__ */ new Map();
  cancelTimer;
  /** Replaces a watcher of the same id. May call onResult before it returns. */
  add(id, watcher) {
    this.watchers.set(id, watcher);
    this.check();
  }
  remove(id) {
    this.watchers.delete(id);
  }
  check() {
    const facts = this.facts();
    for (const [id, watcher] of [...this.watchers]) {
      if (this.watchers.get(id) !== watcher) continue;
      const result2 = evaluateCondition(watcher.condition, facts, watcher.since);
      if (result2 === "waiting") continue;
      this.watchers.delete(id);
      watcher.onResult(result2);
    }
    this.armTimer(facts.now);
  }
  stop() {
    this.cancelTimer?.();
    this.watchers.clear();
  }
  armTimer(now2) {
    this.cancelTimer?.();
    this.cancelTimer = void 0;
    const next = earliest([...this.watchers.values()].map((watcher) => nextTimeOf(watcher.condition, now2)));
    if (next) this.cancelTimer = timerAt(next, () => this.check());
  }
};

// src/schedule/waits.ts
var ConditionWaits = class {
  store;
  log;
  hostStatus;
  /** Statuses of ended tasks the host no longer holds in memory that a condition names: read
   *  from the store when the condition is first watched. */
  endedTasks = /* @__PURE__ */ new Map();
  /** Waits whose tasks are being looked up; unwait before the lookup ends drops the wait. */
  pendingWaits = /* @__PURE__ */ new Map();
  events;
  watch;
  stopPolling;
  constructor(deps) {
    this.store = deps.store;
    this.log = deps.log;
    this.hostStatus = deps.hostStatus;
    this.events = new RaisedEvents(deps.store);
    this.watch = new ConditionWatch(() => this.facts());
  }
  /** Reads the events raised before this start. */
  load() {
    return this.events.load();
  }
  /** A task's status as conditions see it: the host's, or an ended task's from the store. */
  taskStatus(taskId) {
    return this.hostStatus(taskId) ?? this.endedTasks.get(taskId);
  }
  /** Reads the status of each ended task a condition names that the host does not hold. */
  async learn(condition) {
    for (const taskId of taskIdsOf(condition)) {
      if (this.taskStatus(taskId) !== void 0) continue;
      const task = await this.store.task(taskId);
      if (task && TERMINAL.has(task.status)) this.endedTasks.set(taskId, task.status);
    }
  }
  /** Records an event (`POST /hooks/<name>`) and re-evaluates the conditions. */
  async raise(name) {
    await this.events.raise(name);
    this.watch.check();
  }
  /** Takes events another process (the CLI) wrote to the store since the last look. */
  async pollRaised() {
    if (await this.events.poll()) this.watch.check();
  }
  /** Re-evaluates every condition (a task ended). */
  check() {
    this.watch.check();
  }
  /** Waits for a trigger's condition; replaces an earlier watch of the trigger. */
  watchTrigger(id, watcher) {
    this.watch.add(`trigger:${id}`, watcher);
  }
  unwatchTrigger(id) {
    this.watch.remove(`trigger:${id}`);
  }
  /** Waits for a condition on the host's behalf; see Scheduler.wait. */
  wait(id, watcher) {
    const key = `wait:${id}`;
    const watch = () => this.watch.add(key, watcher);
    if (taskIdsOf(watcher.condition).every((taskId) => this.taskStatus(taskId) !== void 0)) return watch();
    const token = {};
    this.pendingWaits.set(key, token);
    this.learn(watcher.condition).catch((error) => this.log.error({ err: error, wait: id }, "could not read the tasks a condition names")).finally(() => {
      if (this.pendingWaits.get(key) !== token) return;
      this.pendingWaits.delete(key);
      watch();
    });
  }
  unwait(id) {
    this.pendingWaits.delete(`wait:${id}`);
    this.watch.remove(`wait:${id}`);
  }
  /** Looks for events raised by another process every `pollMs`. */
  startPolling(pollMs) {
    let polling = false;
    const handle = setInterval(() => {
      if (polling) return;
      polling = true;
      this.pollRaised().catch((error) => this.log.error({ err: error }, "could not read raised events")).finally(() => polling = false);
    }, pollMs);
    this.stopPolling = () => clearInterval(handle);
  }
  stop() {
    this.stopPolling?.();
    this.watch.stop();
  }
  facts() {
    return {
      taskStatus: (taskId) => this.taskStatus(taskId),
      now: /* @__PURE__ */ new Date(),
      raisedSince: (name, since) => this.events.raisedSince(name, since)
    };
  }
};

// src/schedule/scheduler.ts
var Scheduler = class {
  log;
  pollMs;
  table;
  waits;
  firings;
  dueTimes;
  chain = new SerialChain();
  stopped = false;
  constructor(deps) {
    this.log = deps.log;
    this.pollMs = deps.pollMs ?? 1e3;
    this.table = new TriggerTable(deps.store);
    this.waits = new ConditionWaits({ store: deps.store, log: deps.log, hostStatus: (taskId) => deps.host.taskStatus(taskId) });
    this.firings = new Firings({ store: deps.store, table: this.table, host: deps.host, log: deps.log, onFiring: deps.onFiring });
    this.dueTimes = new DueTimes({
      table: this.table,
      waits: this.waits,
      onDue: (id, slot, afterDowntime) => this.due(id, slot, afterDowntime),
      onDecided: (id, result2, at2) => this.conditionDecided(id, result2, at2),
      background: (op) => this.background(op)
    });
  }
  // ── life cycle ──────────────────────────────────────────────────────────────
  /** Loads the triggers and re-arms them. Call it once the host knows its tasks (taskStatus). */
  async start() {
    await this.waits.load();
    for (const trigger of await this.table.load()) if (trigger.condition) await this.waits.learn(trigger.condition);
    await this.chain.run(async () => {
      for (const trigger of this.table.all()) await this.firings.resumeRun(trigger);
      for (const trigger of this.table.all()) {
        if (trigger.status !== "active") continue;
        await this.dueTimes.catchUp(trigger).catch((error) => this.end(this.table.get(trigger.id), `it could not be re-armed: ${errorText(error)}`));
      }
    });
    this.waits.startPolling(this.pollMs);
  }
  async stop() {
    this.stopped = true;
    this.dueTimes.disarmAll();
    this.waits.stop();
    await this.settled();
  }
  /** Resolves once no scheduler work is under way (for tests and shutdown). */
  settled() {
    return this.chain.settled();
  }
  // ── the tool's side ─────────────────────────────────────────────────────────
  /** Creates a trigger; a call replayed after a crash (same origin) gets the same trigger. */
  async create(request, where) {
    const valid = ScheduleRequest.parse(request);
    return this.chain.run(async () => {
      const known = await this.table.idOfOrigin(where.origin);
      if (known) return { taskId: known };
      const trigger = newTrigger(valid, where);
      try {
        if (trigger.kind === "scheduled") trigger.nextRunAt = new Date(trigger.runAt).toISOString();
        else if (trigger.kind !== "conditional") trigger.nextRunAt = this.dueTimes.nextAfterNow(trigger)?.toISOString();
        else await this.waits.learn(trigger.condition);
        await this.table.save(trigger);
      } catch (error) {
        this.dueTimes.disarm(trigger.id);
        throw error;
      }
      this.dueTimes.arm(trigger);
      this.log.info({ trigger: trigger.id, kind: trigger.kind, nextRunAt: trigger.nextRunAt }, "trigger created");
      return { taskId: trigger.id };
    });
  }
  /** Removes an active trigger (of `conversation`, when given). A run under way is not touched. */
  cancel(id, conversation) {
    return this.chain.run(async () => {
      const trigger = this.table.get(id);
      if (!trigger || trigger.status !== "active" && trigger.status !== "paused" || conversation !== void 0 && trigger.conversation !== conversation) return false;
      await this.table.save({ ...trigger, status: "cancelled", nextRunAt: void 0, cooldownUntil: void 0 });
      this.dueTimes.disarm(id);
      return true;
    });
  }
  /** Pauses an active trigger (of `conversation`, when given); the CLI's path too. Returns the
   *  paused trigger, or why it could not be paused. See trigger-changes.ts. */
  pauseTrigger(id, conversation) {
    return this.change(id, conversation, pausedTrigger);
  }
  /** Resumes a paused trigger from now, without catching up (see resumedTrigger). */
  resumeTrigger(id, conversation) {
    return this.change(id, conversation, (trigger) => resumedTrigger(trigger));
  }
  /** Gives a trigger a new definition in place, keeping its id and firings (see editedTrigger). */
  async editTrigger(id, request, conversation) {
    const valid = ScheduleRequest.parse(request);
    const late = valid.runAt === void 0 ? void 0 : runAtProblem(valid.runAt);
    if (late) return late;
    if (valid.condition) await this.waits.learn(valid.condition);
    return this.change(id, conversation, (trigger) => editedTrigger(trigger, valid));
  }
  /** The conversation's active triggers, oldest first. */
  list(conversation) {
    return this.table.list(conversation);
  }
  /** A user's triggers in force (active or paused), for their quota. */
  inForce(user) {
    return this.table.all().filter((trigger) => trigger.user === user && (trigger.status === "active" || trigger.status === "paused"));
  }
  /** The trigger a tool call created, if it did (a call replayed after a crash). */
  createdBy(origin) {
    return this.table.idOfOrigin(origin);
  }
  /** The conversation that created a trigger: where its problems are told. */
  async owner(id) {
    return (await this.table.find(id))?.conversation;
  }
  /** A task's status as conditions see it: the host's, or an ended task's from the store. */
  taskStatus(taskId) {
    return this.waits.taskStatus(taskId);
  }
  // ── what the host reports ───────────────────────────────────────────────────
  /** Records an event (`POST /hooks/<name>`) and re-evaluates the conditions. */
  raise(name) {
    return this.waits.raise(name);
  }
  /** Takes events another process (the CLI) wrote to the store since the last look. */
  pollRaised() {
    return this.waits.pollRaised();
  }
  /** The host calls this whenever any task ends: a trigger's run, or a task a condition names. */
  async taskEnded(taskId, status) {
    const recorded = this.chain.run(async () => {
      const trigger = this.table.runningTask(taskId);
      if (trigger) await this.firings.runEnded(trigger, status);
    });
    this.waits.check();
    await recorded;
  }
  /** The firing's report was posted; `messageId` is the platform's id. */
  delivered(firingId, messageId) {
    return this.chain.run(() => this.firings.update(firingId, (firing) => ({ ...firing, status: firing.status === "failed" ? "failed" : "delivered", messageId })));
  }
  /** A quiet trigger's run answered NO_REPORT: nothing is posted, and its firing says so. */
  nothingToReport(firingId) {
    return this.chain.run(() => this.firings.update(firingId, (firing) => ({ ...firing, nothingToReport: true })));
  }
  /** The firing's report could not be posted (the host tells the owner's conversation). */
  deliveryFailed(firingId, error) {
    return this.chain.run(() => this.firings.update(firingId, (firing) => ({ ...firing, status: "failed", error })));
  }
  /** Waits for a condition on the host's behalf (a conditional delegate task, which the host
   *  persists and waits for again after a restart — after start(), which loads the events).
   *  `onResult` is called once, maybe before wait returns; `id` replaces an earlier wait. */
  wait(id, condition, since, onResult) {
    this.waits.wait(id, { condition, since, onResult });
  }
  unwait(id) {
    this.waits.unwait(id);
  }
  // ── firing ──────────────────────────────────────────────────────────────────
  /** A recurring or scheduled trigger reached `slot`, a due time at or after its nextRunAt.
   *  `afterDowntime`: found at start-up, so it was missed however recent it is. */
  async due(id, slot, afterDowntime) {
    const trigger = this.table.get(id);
    if (!trigger || trigger.status !== "active" || !trigger.nextRunAt || slot.getTime() < Date.parse(trigger.nextRunAt)) return;
    const outcome = dueOutcome(trigger, Date.now() - slot.getTime(), afterDowntime);
    const missedFrom = Date.parse(trigger.nextRunAt) < slot.getTime() ? trigger.nextRunAt : void 0;
    const next = this.dueTimes.nextAfterNow(trigger);
    const firing = await this.firings.fire({ ...trigger, nextRunAt: next?.toISOString(), status: next ? "active" : "ended" }, slot, outcome, missedFrom);
    this.dueTimes.arm(this.table.get(id));
    if (firing.outcome === "missed_skipped") await this.firings.tellSkipped(trigger, firing);
  }
  /** A conditional trigger's condition was decided at `at`. */
  async conditionDecided(id, result2, at2) {
    const trigger = this.table.get(id);
    if (!trigger || trigger.status !== "active") return;
    if (result2 === "never") return this.end(trigger, "its condition can no longer hold");
    const since = new Date(at2.getTime() + 1).toISOString();
    const last = evaluateCondition(trigger.condition, { ...this.waits.facts(), raisedSince: () => false }, since) === "holds";
    const cooldownUntil = trigger.cooldown > 0 && !last ? new Date(Date.now() + trigger.cooldown * 1e3).toISOString() : void 0;
    await this.firings.fire({ ...trigger, since, cooldownUntil, status: last ? "ended" : "active", endReason: last ? "its condition stays true" : void 0 }, at2, "fired");
    this.dueTimes.arm(this.table.get(id));
  }
  async end(trigger, reason) {
    await this.table.save({ ...trigger, status: "ended", endReason: reason, nextRunAt: void 0, cooldownUntil: void 0 });
    this.dueTimes.disarm(trigger.id);
    await this.firings.tell(trigger, `The schedule ${trigger.id} (\u201C${trigger.prompt.slice(0, 80)}\u201D) ended: ${reason}.`);
  }
  /** Writes a trigger's new record (made by `make` from the current one), then waits anew. */
  change(id, conversation, make) {
    return this.chain.run(async () => {
      const trigger = this.table.get(id);
      if (!trigger || conversation !== void 0 && trigger.conversation !== conversation) return `no schedule ${id} here`;
      const changed = make(trigger);
      if (typeof changed === "string") return changed;
      await this.table.save(changed);
      this.dueTimes.disarm(id);
      this.dueTimes.arm(changed);
      this.log.info({ trigger: id, status: changed.status, nextRunAt: changed.nextRunAt }, "trigger changed");
      return changed;
    });
  }
  /** Work a timer started: nobody awaits it, so its failure is logged. */
  background(op) {
    this.chain.run(() => this.stopped ? Promise.resolve() : op()).catch((error) => this.log.error({ err: error }, "scheduler work failed"));
  }
};

// src/control/control-inbox.ts
var ControlInbox = class {
  constructor(store, handlers, log, pollMs = 1e3) {
    this.store = store;
    this.handlers = handlers;
    this.log = log;
    this.pollMs = pollMs;
  }
  store;
  handlers;
  log;
  pollMs;
  timer;
  polling = false;
  /** Applies every pending control, oldest first; then keeps polling. */
  async start() {
    await this.applyPending();
    this.timer = setInterval(() => {
      if (this.polling) return;
      this.polling = true;
      this.applyPending().catch((error) => this.log.error({ err: error }, "could not apply the owner's controls")).finally(() => this.polling = false);
    }, this.pollMs);
  }
  stop() {
    clearInterval(this.timer);
  }
  async applyPending() {
    for (const control of await this.store.owner.pendingControls()) {
      const outcome = await this.apply(control).catch((error) => ({ error: error instanceof Error ? error.message : String(error) }));
      const settled = "error" in outcome ? { ...control, status: "refused", result: outcome.error } : { ...control, status: "applied", result: outcome.done };
      await this.store.owner.settleControl(settled);
      this.log.info({ control: settled }, `owner control ${control.kind} ${control.target}: ${settled.result}`);
    }
  }
  apply(control) {
    switch (control.kind) {
      case "trigger.pause":
        return this.handlers.pauseTrigger(control.target, true);
      case "trigger.resume":
        return this.handlers.pauseTrigger(control.target, false);
      case "trigger.remove":
        return this.handlers.removeTrigger(control.target);
      case "user.revoke":
        return this.handlers.revokeUser(control.target);
      case "task.cancel":
        return this.handlers.cancelTask(control.target);
    }
  }
};

// src/user/profiles.ts
init_cron();
var Profiles = class {
  constructor(store, defaultZone, log) {
    this.store = store;
    this.defaultZone = defaultZone;
    this.log = log;
  }
  store;
  defaultZone;
  log;
  profiles = /* @__PURE__ */ new Map();
  async load() {
    for (const profile of await this.store.users.profiles()) this.profiles.set(profile.user, profile);
  }
  /** The user's IANA zone, or DEFAULT_TIMEZONE. */
  timeZoneOf(user) {
    return this.profiles.get(user)?.timeZone ?? this.defaultZone;
  }
  /** Where the user's zone comes from, for /timezone. */
  sourceOf(user) {
    return this.profiles.get(user)?.timeZoneSource ?? "default";
  }
  /** The user chose a zone. Returns an error text for a name that is not an IANA zone. */
  async setTimeZone(user, zone) {
    const name = zone.trim();
    if (!isTimeZone(name)) return { error: `"${name}" is not an IANA time zone name (e.g. Europe/Berlin, America/New_York, Asia/Kolkata)` };
    const canonical2 = new Intl.DateTimeFormat("en-US", { timeZone: name }).resolvedOptions().timeZone;
    await this.save({ ...this.profiles.get(user), user, timeZone: canonical2, timeZoneSource: "user", updatedAt: (/* @__PURE__ */ new Date()).toISOString() });
    return { timeZone: canonical2 };
  }
  /** The platform reported the user's zone: kept unless the user chose one; bad names ignored. */
  async platformTimeZone(user, zone) {
    const known = this.profiles.get(user);
    if (known?.timeZoneSource === "user" || known?.timeZone === zone) return;
    if (!isTimeZone(zone)) return void this.log.warn({ user, zone }, "the platform reported a time zone that is not an IANA name; ignored");
    await this.save({ ...known, user, timeZone: zone, timeZoneSource: "platform", updatedAt: (/* @__PURE__ */ new Date()).toISOString() });
  }
  async save(profile) {
    await this.store.save({ profiles: [profile] });
    this.profiles.set(profile.user, profile);
  }
};

// src/agent/loop.ts
init_permission();
init_tool();
import { APICallError, generateText as generateText3, jsonSchema, tool, zodSchema } from "ai";

// src/agent/context.ts
import { readFile as readFile4 } from "node:fs/promises";
import { fileURLToPath, pathToFileURL } from "node:url";
var PRUNE_PROTECT = 4e4;
var PRUNE_MINIMUM = 2e4;
var CLEARED = "[Old tool result content cleared]";
var REPORTED = "[Task results already reported to the user; cleared]";
var COMPACTION_QUESTION = "What did we do so far?";
function estimateTokens(value) {
  const text = typeof value === "string" ? value : JSON.stringify(value ?? "");
  return Math.ceil(text.length / 4);
}
var counted = /* @__PURE__ */ new WeakMap();
function tokensOf(key, value) {
  let tokens = counted.get(key);
  if (tokens === void 0) {
    tokens = estimateTokens(value);
    counted.set(key, tokens);
  }
  return tokens;
}
var DEFAULT_PRUNE = { protect: PRUNE_PROTECT, minimum: PRUNE_MINIMUM, turns: 2 };
var CLEAR_ALL_TOOL_OUTPUT = { protect: 0, minimum: 0, turns: 0 };
function pruneLimits(budgetTokens) {
  return { protect: Math.floor(budgetTokens / 8), minimum: Math.floor(budgetTokens / 4), turns: 2 };
}
function toModelMessages(records, limits = DEFAULT_PRUNE) {
  const start = records.findLastIndex((record) => record.kind === "summary");
  const live = start >= 0 ? records.slice(start) : records;
  const pruned = prunedParts(live, limits);
  const out = start >= 0 ? [{ role: "user", content: COMPACTION_QUESTION }] : [];
  live.forEach((record, index) => {
    const message = pruned.has(index) ? clear(record.message, pruned.get(index)) : record.message;
    const previous = out.at(-1);
    if (message.role === "tool" && previous?.role === "tool") {
      out[out.length - 1] = { role: "tool", content: [...previous.content, ...message.content] };
    } else {
      out.push(message);
    }
  });
  return out;
}
var passes = /* @__PURE__ */ new WeakMap();
function prunedParts(records, limits) {
  const first = records[0];
  if (!first) return /* @__PURE__ */ new Map();
  const key = `${limits.protect}/${limits.minimum}/${limits.turns}`;
  let states = passes.get(first);
  if (!states) passes.set(first, states = /* @__PURE__ */ new Map());
  let state = states.get(key);
  if (!state || state.through > records.length) state = { through: 0, cleared: /* @__PURE__ */ new Map() };
  for (let end = state.through; end < records.length; end++) if (records[end].message.role === "assistant") prunePass(records, end, limits, state.cleared);
  state.through = records.length;
  states.set(key, state);
  const cleared = copy(state.cleared);
  prunePass(records, records.length, limits, cleared);
  return cleared;
}
function prunePass(records, end, limits, cleared) {
  let turns = 0;
  let total = 0;
  let prunable = 0;
  const candidates = /* @__PURE__ */ new Map();
  const mark = (index, id) => candidates.set(index, (candidates.get(index) ?? /* @__PURE__ */ new Set()).add(id));
  walk: for (let i = end - 1; i >= 0; i--) {
    const message = records[i].message;
    if (message.role === "user" && !isEnvironment(message)) turns++;
    if (turns < limits.turns) continue;
    if (message.role === "user" && isTaskResults(message)) {
      if (cleared.has(i)) break;
      total += tokensOf(records[i], message.content);
      if (total > limits.protect) {
        prunable += tokensOf(records[i], message.content);
        mark(i, "");
      }
    }
    if (message.role !== "tool") continue;
    for (const part of message.content) {
      if (part.type !== "tool-result" || part.output.type !== "json" && part.output.type !== "text") continue;
      if (cleared.get(i)?.has(part.toolCallId)) break walk;
      const tokens = tokensOf(part.output, part.output.value);
      total += tokens;
      if (total > limits.protect) {
        prunable += tokens;
        mark(i, part.toolCallId);
      }
    }
  }
  if (prunable <= limits.minimum) return;
  for (const [index, ids] of candidates) cleared.set(index, /* @__PURE__ */ new Set([...cleared.get(index) ?? [], ...ids]));
}
function copy(cleared) {
  return new Map([...cleared].map(([index, ids]) => [index, new Set(ids)]));
}
function isTaskResults(message) {
  return typeof message.content === "string" && message.content.startsWith("<task-results>");
}
function clear(message, callIds) {
  if (message.role === "user" && isTaskResults(message)) return { role: "user", content: reportedStub(message.content) };
  const tool2 = message;
  return {
    role: "tool",
    content: tool2.content.map(
      (part) => part.type === "tool-result" && callIds.has(part.toolCallId) ? { ...part, output: { type: "text", value: CLEARED } } : part
    )
  };
}
function reportedStub(report) {
  const kept = report.match(/<task [^>]*>|<task_metadata>[\s\S]*?<\/task_metadata>/g) ?? [];
  return ["<task-results>", REPORTED, ...kept, "</task-results>"].join("\n");
}
function imagePart(image) {
  return { type: "image", image: pathToFileURL(image.path).href, mediaType: image.mediaType };
}
var isFileReference = (part) => part.type === "image" && typeof part.image === "string" && part.image.startsWith("file:");
async function withImages(messages2) {
  if (!messages2.some((message) => message.role === "user" && Array.isArray(message.content) && message.content.some(isFileReference))) return messages2;
  return Promise.all(
    messages2.map(async (message) => {
      if (message.role !== "user" || typeof message.content === "string" || !message.content.some(isFileReference)) return message;
      const content = await Promise.all(message.content.map((part) => isFileReference(part) ? loadImage(part) : part));
      return { ...message, content };
    })
  );
}
async function loadImage(part) {
  const file = fileURLToPath(part.image);
  try {
    return { ...part, image: await readFile4(file) };
  } catch (error) {
    return { type: "text", text: `[The image ${file} could not be read: ${error.code ?? String(error)}]` };
  }
}

// src/agent/request.ts
import { createHash as createHash5 } from "node:crypto";
var BREAKPOINT = { anthropic: { cacheControl: { type: "ephemeral" } } };
function buildRequest(instructions, longLived, messages2, conversation) {
  const system = [{ role: "system", content: instructions, providerOptions: BREAKPOINT }];
  if (longLived) system.push({ role: "system", content: longLived, providerOptions: BREAKPOINT });
  const marked = /* @__PURE__ */ new Set([messages2.findLastIndex((message) => message.role === "assistant") - 1, messages2.length - 1]);
  return {
    system,
    messages: messages2.map((message, index) => marked.has(index) ? { ...message, providerOptions: BREAKPOINT } : message),
    providerOptions: { openai: { promptCacheKey: cacheKey(conversation) } }
  };
}
function cacheKey(conversation) {
  return `steward-${createHash5("sha256").update(conversation).digest("hex").slice(0, 32)}`;
}
var toolTokens = /* @__PURE__ */ new WeakMap();
function estimatePrompt(request, tools) {
  let offered = 0;
  if (tools) {
    offered = toolTokens.get(tools) ?? estimateTokens(Object.entries(tools).map(([name, tool2]) => ({ name, description: tool2.description, schema: schemaOf(tool2) })));
    toolTokens.set(tools, offered);
  }
  return offered + estimateTokens(request.system.map((message) => message.content).join("")) + estimateTokens(request.messages);
}
function schemaOf(tool2) {
  const schema2 = tool2.inputSchema?.jsonSchema;
  return schema2 && typeof schema2.then !== "function" ? schema2 : {};
}
function modelName(model) {
  return typeof model === "string" ? model : `${model.provider}:${model.modelId}`;
}

// src/agent/messages.ts
function toolCalls(message) {
  if (message.role !== "assistant" || typeof message.content === "string") return [];
  return message.content.filter((part) => part.type === "tool-call");
}
function textOf(message) {
  if (typeof message.content === "string") return message.content;
  return message.content.filter((part) => part.type === "text").map((part) => part.text).join("").trim();
}
function reminder(text, fromUser) {
  const intro = fromUser ? "The user sent the following message:" : "This arrived while you were working:";
  return ["<system-reminder>", intro, text, "", "Please address this message and continue with your tasks.", "</system-reminder>"].join("\n");
}
function userMessage(text, images) {
  if (!images?.length) return { role: "user", content: text };
  return { role: "user", content: [{ type: "text", text }, ...images.map(imagePart)] };
}

// src/agent/run-end.ts
function stepEndsRun(role, assistant, results) {
  const calls2 = toolCalls(assistant);
  if (calls2.length === 0) return false;
  const failed = results.some((message) => message.role === "tool" && message.content.some((part) => part.type === "tool-result" && part.output.type.startsWith("error")));
  if (failed) return false;
  const names2 = calls2.map((call2) => call2.toolName);
  if (role === "teller") return names2.includes("reply") && names2.every((name) => name === "reply" || name === "delegate");
  if (role === "planner") return textOf(assistant) !== "" && names2.every((name) => name === "delegate" || name === "schedule");
  return false;
}

// src/agent/loop.ts
init_envelope();
init_taint();

// src/agent/compaction.ts
import { generateText } from "ai";
var COMPACTION_REQUEST = "Provide a detailed summary of our conversation above, for continuing it without the earlier messages: what was asked, what was decided and done, what is pending.";
var CONTINUE_AFTER_COMPACTION = "Continue if you have next steps.";
var UNSUMMARISED = "(The earlier conversation could not be summarised.)";
async function compact(compaction) {
  const { log } = compaction;
  const kept = unansweredInput(log.records);
  const summarised = log.records.filter((record) => !kept.includes(record));
  const result2 = await generateText({
    model: compaction.model,
    system: compaction.system,
    messages: [...await withImages(toModelMessages(summarised, compaction.limits)), { role: "user", content: COMPACTION_REQUEST }],
    maxRetries: compaction.maxRetries,
    abortSignal: compaction.abort
  });
  compaction.onUsage(result2.usage);
  const summary = result2.text.trim();
  if (summary) await compaction.onCompacted?.(summary);
  await log.append(
    { message: { role: "assistant", content: summary || UNSUMMARISED }, kind: "summary" },
    ...kept.map((record) => ({ message: record.message, kind: "kept" })),
    { message: { role: "user", content: CONTINUE_AFTER_COMPACTION } }
  );
}
function fixedAfterSummary(records, summary) {
  return 2 + records.slice(summary + 1).filter((record) => record.kind === "kept").length;
}
function unansweredInput(records) {
  const summary = records.findLastIndex((record) => record.kind === "summary");
  const answer2 = records.findLastIndex((record, index) => index > summary && isAnswer(record.message));
  return records.slice(Math.max(summary, answer2) + 1).filter((record) => record.message.role === "user" && (record.eventId !== void 0 || record.kind === "kept"));
}
function isAnswer(message) {
  if (message.role !== "assistant") return false;
  const calls2 = toolCalls(message);
  return calls2.length === 0 ? textOf(message) !== "" : calls2.some((call2) => call2.toolName === "reply");
}

// src/agent/stream-step.ts
import { parsePartialJson, streamText } from "ai";
var STEP_TEXT = "text";
var REPLY_PARSE_MS = 100;
async function streamStep(request, answers) {
  const result2 = streamText(request);
  let text = "";
  let spoken = false;
  let calling = false;
  const replies = /* @__PURE__ */ new Map();
  for await (const part of result2.fullStream) {
    if (part.type === "error") throw part.error;
    if (part.type === "text-delta" && !calling) {
      text += part.text;
      spoken ||= part.text.trim() !== "";
      if (spoken) answers.show(STEP_TEXT, text);
    } else if (part.type === "tool-input-start") {
      if (!calling && spoken) answers.drop(STEP_TEXT);
      calling = true;
      if (part.toolName === "reply") replies.set(part.id, { input: "", shown: "", parsedAt: -Infinity });
    } else if (part.type === "tool-input-delta") {
      const reply = replies.get(part.id);
      if (!reply) continue;
      reply.input += part.delta;
      const now2 = performance.now();
      if (now2 - reply.parsedAt < REPLY_PARSE_MS) continue;
      reply.parsedAt = now2;
      const said = await replyText(reply.input);
      if (said && said !== reply.shown) answers.show(part.id, reply.shown = said);
    }
  }
  request.abortSignal?.throwIfAborted();
  return { response: await result2.response, usage: await result2.usage };
}
async function replyText(input) {
  const { value } = await parsePartialJson(input);
  const text = value && typeof value === "object" && "text" in value ? value.text : void 0;
  return typeof text === "string" ? text : "";
}

// src/agent/call-context.ts
init_permission();
import { generateText as generateText2 } from "ai";
function callContext(run, call2, running, fresh) {
  const ctx = { ...run.context, callId: call2.toolCallId, fresh: fresh || void 0 };
  const capabilities = {
    progress: (text) => run.onTool?.({ ...running, title: `${running.title ?? running.tool} \u2014 ${text}` }),
    permit: async (permission, pattern) => {
      const rule = evaluate(permission, pattern, run.rules);
      if (rule.action !== "ask") return rule.action === "allow";
      return run.context.questions.approve(ctx, permission, pattern);
    },
    complete: (request) => complete(run, request)
  };
  return Object.assign(ctx, capabilities);
}
async function complete(run, request) {
  const result2 = await generateText2({
    model: run.model,
    system: request.system,
    messages: request.messages,
    maxOutputTokens: request.maxOutputTokens,
    temperature: request.temperature,
    stopSequences: request.stopSequences,
    maxRetries: run.maxRetries,
    abortSignal: run.context.abort
  });
  run.onCallUsage(result2.usage);
  return { text: result2.text, model: modelName(run.model), finishReason: result2.finishReason };
}

// src/agent/loop.ts
var DOOM_LOOP_THRESHOLD = 3;
var MAX_TOOL_INPUT_CHARS = 256e3;
var MAX_BUDGET_FACTOR = 5;
var MAX_STEPS_REACHED = "You have used all the steps allowed for this run. Do not call tools. Respond now with text only: what was done, and what remains.";
async function runLoop(loopInput) {
  const input = { ...loopInput, tools: withFamilies(loopInput.tools, loopInput.rules) };
  const { log, context } = input;
  let offered = toolSet(input.tools);
  const perMessage = Math.max(2, Math.ceil(input.maxSteps / 2));
  const ceiling = input.maxSteps * MAX_BUDGET_FACTOR;
  let budget = input.maxSteps;
  for (let step = 0; ; step++) {
    context.abort.throwIfAborted();
    const waiting = await answerPendingCalls(input, step > 0);
    if (waiting) return { status: "waiting", call: waiting };
    const injected = step === 0 || budget + perMessage <= ceiling ? input.takeInput?.() ?? [] : [];
    if (injected.length > 0) {
      const facts = input.environment ? [{ message: userMessage(input.environment()) }] : [];
      await log.append(...facts, ...injected.map(({ eventId, text, fromUser, images }) => ({ eventId, message: userMessage(step > 0 ? reminder(text, fromUser) : text, images) })));
      budget = Math.min(ceiling, budget + perMessage * (step === 0 ? injected.length - 1 : injected.length));
    }
    const ended = runEnded(input);
    if (ended) return { status: "done", text: textOf(ended) };
    if (step > 0 && loopInput.tools.some((def) => def.members)) {
      await Promise.all(loopInput.tools.map((def) => def.settled?.()));
      input.tools = withFamilies(loopInput.tools, loopInput.rules);
      offered = toolSet(input.tools);
    }
    if (overflowed(log.records, input.usableTokens) || overBudget(input, offered)) await compactLog(input);
    const lastStep = step >= budget - 1;
    if (lastStep) await log.append({ message: userMessage(MAX_STEPS_REACHED) });
    const result2 = await generateStep(input, offered, lastStep);
    const [assistant, ...rest] = result2.response.messages;
    if (!assistant) return { status: "done", text: "" };
    await log.append(
      { message: assistant, usage: { input: result2.usage.inputTokens ?? 0, output: result2.usage.outputTokens ?? 0 } },
      ...rest.map((message) => ({ message }))
    );
    const answer2 = textOf(assistant);
    if (answer2 && toolCalls(assistant).length === 0) await input.onAnswer?.(answer2, log.records.findLast((record) => record.message === assistant).id);
    if (lastStep) return { status: "done", text: textOf(assistant) };
  }
}
function withFamilies(tools, rules) {
  if (!tools.some((def) => def.members)) return tools;
  return tools.flatMap((def) => {
    if (!def.members) return [def];
    const members = def.members();
    const off = disabled(members.map((member) => member.id), rules);
    return members.filter((member) => !off.has(member.id));
  });
}
function runEnded(input) {
  const records = input.log.records;
  const index = records.findLastIndex((record) => record.message.role !== "tool");
  const last = records[index]?.message;
  if (last?.role !== "assistant") return void 0;
  if (index === records.length - 1) return last;
  return stepEndsRun(input.context.role, last, records.slice(index + 1).map((record) => record.message)) ? last : void 0;
}
var sdkTools = /* @__PURE__ */ new WeakMap();
function toolSet(tools) {
  return Object.fromEntries(
    tools.map((def) => {
      let sdk = sdkTools.get(def);
      if (!sdk) {
        sdk = tool({ description: def.description, inputSchema: def.inputSchema ? jsonSchema(def.inputSchema) : zodSchema(def.parameters) });
        sdkTools.set(def, sdk);
      }
      return [def.id, sdk];
    })
  );
}
async function generateStep(input, offered, lastStep) {
  const step = async () => {
    const request = requestOf(input);
    const call2 = {
      model: input.model,
      ...request,
      // Images are read from the workspace for this call only (budget estimates count their references).
      messages: await withImages(request.messages),
      tools: lastStep ? void 0 : offered,
      maxRetries: input.maxRetries,
      abortSignal: input.context.abort
    };
    const result2 = input.answers ? await streamStep(call2, input.answers) : await generateText3(call2);
    reportUsage(input, input.context.role, result2.usage);
    return result2;
  };
  try {
    return await step();
  } catch (error) {
    if (!isContextOverflow(error)) throw error;
    await compactLog(input, CLEAR_ALL_TOOL_OUTPUT);
    if (lastStep) await input.log.append({ message: userMessage(MAX_STEPS_REACHED) });
    return await step();
  }
}
function requestOf(input, limits = limitsOf(input)) {
  return buildRequest(input.system, input.longLived, toModelMessages(input.log.records, limits), input.context.conversation);
}
function limitsOf(input) {
  return input.budgetTokens === void 0 ? DEFAULT_PRUNE : pruneLimits(input.budgetTokens);
}
var COMPACT_AT_SHARE = 0.75;
function overBudget(input, offered) {
  if (input.budgetTokens === void 0) return false;
  const records = input.log.records;
  const summary = records.findLastIndex((record) => record.kind === "summary");
  const compactable = summary < 0 ? records.length > 0 : records.length - summary > fixedAfterSummary(records, summary);
  return compactable && estimatePrompt(requestOf(input), offered) > input.budgetTokens * COMPACT_AT_SHARE;
}
function reportUsage(input, role, usage3) {
  const { context } = input;
  input.onUsage?.({
    at: (/* @__PURE__ */ new Date()).toISOString(),
    role,
    agent: context.agent,
    conversation: context.conversation,
    sessionId: context.sessionId,
    user: context.user,
    taskId: context.taskId,
    model: modelName(input.model),
    input: usage3.inputTokens ?? 0,
    cachedInput: usage3.inputTokenDetails?.cacheReadTokens ?? 0,
    output: usage3.outputTokens ?? 0
  });
}
async function answerPendingCalls(input, fresh) {
  const { log } = input;
  const index = log.records.findLastIndex((record) => record.message.role === "assistant");
  if (index < 0) return void 0;
  const answered = new Set(
    log.records.slice(index + 1).flatMap((record) => record.message.role === "tool" ? record.message.content.flatMap((part) => part.type === "tool-result" ? [part.toolCallId] : []) : [])
  );
  const calls2 = toolCalls(log.records[index].message).filter((call2) => !answered.has(call2.toolCallId));
  const images = [];
  for (const call2 of calls2) {
    const def = input.tools.find((candidate) => candidate.id === call2.toolName);
    const output = await execute(input, def, call2, fresh);
    if (output.ok && output.value === AWAIT_ANSWER) return call2;
    await log.append({ message: { role: "tool", content: [toolResult(call2, withoutImages(output, images), def?.untrustedOutput && sourceOf(def, call2, input.context.role))] } });
  }
  if (input.vision && images.length > 0) await log.append({ message: userMessage(TOOL_IMAGES, images) });
  return void 0;
}
var TOOL_IMAGES = "The images the tool calls above returned:";
function withoutImages(output, images) {
  if (!output.ok || typeof output.value !== "object" || output.value === null || !("images" in output.value)) return output;
  const { images: found, ...rest } = output.value;
  images.push(...found ?? []);
  return { ok: true, value: rest };
}
async function execute(input, def, call2, fresh) {
  if (!def) return { ok: false, error: `Unknown tool "${call2.toolName}". Available tools: ${input.tools.map((t) => t.id).join(", ")}.` };
  const size = JSON.stringify(call2.input ?? null).length;
  if (size > MAX_TOOL_INPUT_CHARS) {
    return { ok: false, error: `Input too large for tool ${def.id}: ${size} characters, the limit is ${MAX_TOOL_INPUT_CHARS}. Send less at once (split it over several calls, or write long text to a file).` };
  }
  const parsed = def.parameters.safeParse(call2.input);
  if (!parsed.success) return { ok: false, error: `Invalid input for tool ${def.id}: ${parsed.error.message}` };
  if (isDoomLoop(input.log.records, call2)) {
    return {
      ok: false,
      error: `Refused: this is the ${DOOM_LOOP_THRESHOLD}rd call in a row of ${def.id} with the same input. It will not give a different result; change the input or take another approach.`
    };
  }
  const pattern = def.pattern?.(parsed.data, input.context.role) ?? "*";
  const own = evaluate(def.id, pattern, input.rules);
  const ctx = { ...input.context, callId: call2.toolCallId };
  const rule = own.action === "allow" && await taintedRule(def, parsed.data, pattern, ctx, input.rules, input.log.records) || own;
  const permission = rule === own ? def.id : `${TAINTED}${def.id}`;
  if (rule.action === "deny") return { ok: false, error: `Permission denied: ${permission} may not be used on "${pattern}".` };
  if (rule.action === "ask") {
    const approved = await input.context.questions.approve(ctx, permission, pattern);
    if (!approved) return { ok: false, error: `Permission denied by the user: ${def.id} may not be used on "${pattern}".` };
  }
  const title = pattern === "*" ? def.id : `${def.id} ${pattern}`.slice(0, 80);
  const running = { id: call2.toolCallId, tool: def.id, status: "running", title };
  input.onTool?.(running);
  try {
    const run = { ...input, onCallUsage: (usage3) => reportUsage(input, input.context.role, usage3) };
    const value = await def.execute(parsed.data, Object.assign(callContext(run, call2, running, fresh), { tainted: tainted(input.log.records) || void 0 }));
    input.onTool?.({ id: call2.toolCallId, tool: def.id, status: "completed", title });
    return { ok: true, value };
  } catch (error) {
    if (input.context.abort.aborted) throw error;
    input.onTool?.({ id: call2.toolCallId, tool: def.id, status: "error", title });
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, ran: true, error: error instanceof ToolError ? message : `Tool ${def.id} failed: ${message}` };
  }
}
function isDoomLoop(records, call2) {
  const since = records.findLastIndex((record) => record.message.role === "user");
  const calls2 = records.slice(since + 1).flatMap((record) => toolCalls(record.message));
  const at2 = calls2.findIndex((candidate) => candidate.toolCallId === call2.toolCallId);
  const recent = calls2.slice(Math.max(0, at2 - (DOOM_LOOP_THRESHOLD - 1)), at2);
  const key = JSON.stringify(call2.input);
  return recent.length === DOOM_LOOP_THRESHOLD - 1 && recent.every((c) => c.toolName === call2.toolName && JSON.stringify(c.input) === key);
}
function overflowed(records, usable) {
  for (let i = records.length - 1; i >= 0; i--) {
    const record = records[i];
    if (record.kind === "summary") return false;
    if (record.usage) return record.usage.input + record.usage.output > usable;
  }
  return false;
}
function compactLog(input, limits = limitsOf(input)) {
  const { model, compactionSystem: system, log, maxRetries, context, onCompacted } = input;
  return compact({ model, system, log, limits, maxRetries, abort: context.abort, onCompacted, onUsage: (usage3) => reportUsage(input, "compaction", usage3) });
}
function isContextOverflow(error) {
  return APICallError.isInstance(error) && error.statusCode === 400 && /context|too long|too many tokens|maximum.*tokens/i.test(`${error.message} ${error.responseBody ?? ""}`);
}
function sourceOf(def, call2, role) {
  const parsed = def.parameters.safeParse(call2.input);
  const on = parsed.success ? def.pattern?.(parsed.data, role) ?? "" : "";
  return `${def.id} ${on}`.trim().slice(0, 200);
}
function toolResult(call2, output, untrustedFrom) {
  const outside = untrustedFrom && (output.ok || output.ran);
  const shown = output.ok ? outside ? { type: "text", value: untrusted(untrustedFrom, JSON.stringify(output.value ?? null)) } : { type: "json", value: output.value ?? null } : { type: "error-text", value: outside ? untrusted(untrustedFrom, output.error) : output.error };
  return { type: "tool-result", toolCallId: call2.toolCallId, toolName: call2.toolName, output: shown };
}

// src/supervisor/report.ts
init_envelope();
function reportText(batch) {
  const tasks2 = batch.map(
    (task) => [
      `<task id="${task.id}" agent="${task.agent}" status="${task.status}">`,
      `Prompt: ${defused(task.prompt)}`,
      task.status === "completed" ? untrusted(`${task.agent} report`, task.result || "(no output)") : `Error: ${defused(task.error ?? task.status)}`,
      "<task_metadata>",
      `session_id: ${task.sessionId}`,
      "</task_metadata>",
      "</task>"
    ].join("\n")
  );
  const results = ["<task-results>", ...tasks2, "</task-results>"];
  if (batch[0]?.command) results.push("", `(The user ran ${batch[0].command}.) Summarize the task tool output above and continue with your task.`);
  const firing = batch[0]?.firingId;
  if (firing) results.push("", `(A scheduled run of schedule ${firing.split("/")[0]} ended. Tell the user what it found with reply, in your own words and in this conversation's context; do not paste the raw report.)`);
  return results.join("\n");
}
function readableReport(report) {
  return unwrapped(report).replace(/<task_metadata>[\s\S]*?<\/task_metadata>\n?/g, "").replace(/<task id="([^"]*)" agent="([^"]*)" status="([^"]*)">\n/g, "\n*Task $1* ($2): $3\n").replace(/<\/?task(-results)?>\n?/g, "").replace(/\n\(The user ran [^\n]*$/, "").replace(/\n\(A scheduled run of schedule [^\n]*$/, "").trim();
}

// src/stream/live-answers.ts
var LiveAnswers = class {
  constructor(open4) {
    this.open = open4;
  }
  open;
  shown = /* @__PURE__ */ new Map();
  show(key, text) {
    let answer2 = this.shown.get(key);
    if (!answer2) {
      const id = newId();
      answer2 = { id, live: this.open(id) };
      this.shown.set(key, answer2);
    }
    answer2.live.update(text);
  }
  drop(key) {
    this.shown.get(key)?.live.discard();
    this.shown.delete(key);
  }
  take(key) {
    const answer2 = this.shown.get(key);
    if (!answer2) return void 0;
    this.shown.delete(key);
    return { id: answer2.id, discard: () => answer2.live.discard() };
  }
  close() {
    for (const key of [...this.shown.keys()]) this.drop(key);
  }
};

// src/supervisor/turn-author.ts
function nextAuthor(events2) {
  return (events2.find((event) => event.kind === "answer") ?? events2[0])?.user;
}
function firstOf(events2, author) {
  return events2.find((event) => event.kind === "answer" && event.user === author) ?? events2.find((event) => event.user === author);
}
function takeOwn(events2, author) {
  const own = events2.filter((event) => event.user === author);
  const others = events2.filter((event) => event.user !== author);
  events2.splice(0, events2.length, ...others);
  return own;
}
function putBack(events2, taken) {
  const merged = [...taken, ...events2].sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  events2.splice(0, events2.length, ...merged);
}

// src/supervisor/conversations.ts
var StoppedByUser = class extends Error {
};
var MAX_TURN_ATTEMPTS = 3;
var Conversations = class {
  constructor(deps) {
    this.deps = deps;
  }
  deps;
  conversations = /* @__PURE__ */ new Map();
  /** Per conversation, the trigger firings whose reports the running Teller turn is handling. */
  turnFirings = /* @__PURE__ */ new Map();
  /** Per conversation, the answers the running Teller turn shows as they are written. */
  turnAnswers = /* @__PURE__ */ new Map();
  /** Per conversation, the running turn and whom it acts for. */
  turns = /* @__PURE__ */ new Map();
  /** Turns under way, so stop() can wait for them. */
  inflight = /* @__PURE__ */ new Set();
  /** Ids of the events queued or being handled: an event is taken once, however often it is
   *  woken (a batch's results by recovery and by the normal path). */
  queued = /* @__PURE__ */ new Set();
  /** Takes the events left pending by a stop or crash (see recovery.ts); `resume` runs them. */
  async load() {
    const events2 = (await this.deps.store.events()).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    for (const event of events2) this.enqueue(event);
  }
  /** Starts the turns of every conversation with events waiting, or of one. */
  resume(only) {
    for (const conversation of this.conversations.values()) if (only === void 0 || conversation.id === only) this.pump(conversation);
  }
  /** Aborts running turns and waits for them; their events stay pending and are replayed from
   *  the log at the next start. */
  async stop() {
    for (const { controller } of this.turns.values()) controller.abort(new Error("Steward is stopping"));
    await Promise.allSettled(this.inflight);
  }
  /** A turn is running, or events wait for one — unless they wait for the user's answer. */
  get busy() {
    return [...this.conversations.values()].some((c) => c.busy || c.events.length > 0 && !this.deps.questions.openIn(c.id, "ask_user"));
  }
  /** Conversations with a turn running now. */
  inTurn() {
    return new Set([...this.conversations.values()].filter((c) => c.busy).map((c) => c.id));
  }
  /** /stop: aborts the conversation's running Teller turn — only one acting for `user`, when
   *  given; false when there is none to stop. */
  stopTurn(conversation, user) {
    const turn = this.turns.get(conversation);
    if (!turn || user !== void 0 && turn.user !== user) return false;
    turn.controller.abort(new StoppedByUser("stopped by the user"));
    return true;
  }
  /** Whom the conversation's running turn acts for, if one runs. */
  turnAuthor(conversation) {
    return this.turns.get(conversation)?.user;
  }
  /** Whose conversation this is, if Steward has one with that id. */
  async userOf(id) {
    return this.conversations.get(id)?.user ?? (await this.deps.store.conversation(id))?.user;
  }
  /** Wakes the conversation's Teller with an event already on record. */
  enqueue(event) {
    if (this.queued.has(event.id)) return;
    this.queued.add(event.id);
    const conversation = this.conversation(event.conversation, event.user);
    conversation.events.push(event);
    this.pump(conversation);
  }
  /** Conversations held in memory: those with a turn running or events waiting. */
  get size() {
    return this.conversations.size;
  }
  /** Records a user message (with the platform event id that brought it, when given) and
   *  queues it. `typed` is what the user wrote (for the history); `text` what the Teller is given,
   *  with `images` (files the user sent) when its model sees images. */
  async userMessage(conversation, user, typed, text, platformEventId, images) {
    const event = { id: newId(), conversation, user, kind: "user_message", text, createdAt: (/* @__PURE__ */ new Date()).toISOString(), attempts: 0, ...images?.length && { images } };
    await this.deps.store.save({ events: [event], history: [{ id: event.id, conversation, role: "user", text: typed }], seen: platformEventId === void 0 ? [] : [platformEventId] });
    this.enqueue(event);
  }
  /** /new: later turns use a fresh Teller session; an open question of the old one is closed
   *  (messages held behind it go to the new session once the conversation resumes). */
  async newTellerSession(conversation, user) {
    const session = { id: newId(), role: "teller", agent: "teller", conversation, user, createdAt: (/* @__PURE__ */ new Date()).toISOString() };
    await this.deps.questions.dismiss(conversation);
    await this.deps.store.save({ conversations: [{ id: conversation, user, tellerSessionId: session.id }], sessions: [session] });
    this.deps.sessions.adopt(session);
    this.conversation(conversation, user).tellerSessionId = session.id;
  }
  /** The id of the conversation's Teller session, created on first use. */
  async tellerSessionId(conversation, user) {
    const held = this.conversations.get(conversation);
    return held?.tellerSessionId ?? (await this.sessionInfo(conversation, user)).id;
  }
  /** The reply tool: a reply in a turn that handles a scheduled report is that report, so its
   *  delivery is recorded on the firing. */
  async reply(caller, text) {
    const live = this.turnAnswers.get(caller.conversation)?.take(caller.callId);
    const record = await this.deps.outbox.add(caller.conversation, { text, live: live?.id }, `${caller.sessionId}:${caller.callId}`, {}, this.firingOf(caller), caller.fresh);
    if (live && record.live !== live.id) live.discard();
  }
  /** The send_file tool: the outbox record holds the file's path; the adapter reads it when sending. */
  async sendFile(caller, file, caption) {
    await this.deps.outbox.add(caller.conversation, { text: caption, file }, `${caller.sessionId}:${caller.callId}`, {}, this.firingOf(caller), caller.fresh);
  }
  firingOf(caller) {
    return caller.role === "teller" ? this.turnFirings.get(caller.conversation)?.values().next().value : void 0;
  }
  conversation(id, user) {
    let conversation = this.conversations.get(id);
    if (!conversation) {
      conversation = { id, user, events: [], busy: false };
      this.conversations.set(id, conversation);
    }
    return conversation;
  }
  /** Turns of one conversation run one at a time, in arrival order. */
  pump(conversation) {
    if (conversation.busy || conversation.events.length === 0 || this.deps.stopping()) return;
    if (this.deps.questions.openIn(conversation.id, "ask_user")) return;
    conversation.busy = true;
    this.deps.changed();
    const run = this.turn(conversation).catch((error) => this.deps.log.error({ err: error, conversation: conversation.id }, "turn failed unexpectedly")).finally(() => {
      conversation.busy = false;
      this.deps.changed();
      this.pump(conversation);
      if (!conversation.busy && conversation.events.length === 0 && this.conversations.get(conversation.id) === conversation) this.conversations.delete(conversation.id);
    });
    this.inflight.add(run);
    void run.finally(() => this.inflight.delete(run));
  }
  async turn(conversation) {
    const first = firstOf(conversation.events, nextAuthor(conversation.events));
    const attempt = { ...first, attempts: first.attempts + 1 };
    this.deps.store.save({ events: [attempt] }).catch((error) => this.deps.log.error({ err: error }, "could not record a turn attempt"));
    conversation.events[conversation.events.indexOf(first)] = attempt;
    const session = await this.tellerSession(conversation);
    try {
      await this.handle(conversation, session, attempt, first);
    } finally {
      this.deps.sessions.release(session.info.id);
    }
  }
  async handle(conversation, session, attempt, first) {
    if (attempt.attempts > MAX_TURN_ATTEMPTS) {
      conversation.events.splice(conversation.events.indexOf(attempt), 1);
      if (attempt.kind === "task_results") await this.relayResults(attempt);
      else await this.deps.outbox.add(conversation.id, "Sorry \u2014 I kept failing while handling your last message, so I stopped. Please send it again.", `giveup:${attempt.id}`);
      await this.done([attempt]);
      return;
    }
    const consumed = [];
    const firings2 = new Set(conversation.events.flatMap((event) => event.firingId && event.user === attempt.user && session.has(event.id) ? [event.firingId] : []));
    this.turnFirings.set(conversation.id, firings2);
    const takeInput = () => {
      const taken = takeOwn(conversation.events, attempt.user);
      consumed.push(...taken);
      for (const event of taken) if (event.firingId) firings2.add(event.firingId);
      return taken.filter((event) => event.kind !== "answer" && !session.has(event.id)).map((event) => ({ eventId: event.id, text: event.text, fromUser: event.kind === "user_message", images: event.images }));
    };
    const turnStart = session.records.length;
    const controller = new AbortController();
    const liveText = this.deps.liveText?.(conversation.id, attempt.user);
    const answers = liveText && new LiveAnswers(liveText);
    if (answers) this.turnAnswers.set(conversation.id, answers);
    let outcome;
    let failed = false;
    let stopped = false;
    try {
      this.turns.set(conversation.id, { controller, user: attempt.user });
      const onAnswer = (text, recordId) => this.answer(conversation.id, text, recordId, firings2, true, answers?.take(STEP_TEXT));
      outcome = await this.deps.runTeller(session, controller.signal, { conversation: conversation.id, user: attempt.user }, takeInput, { onAnswer, answers });
    } catch (error) {
      if (this.deps.stopping()) {
        putBack(conversation.events, consumed);
        return;
      }
      stopped = controller.signal.reason instanceof StoppedByUser;
      if (!consumed.includes(attempt)) consumed.unshift(...conversation.events.splice(conversation.events.indexOf(attempt), 1));
      outcome = { status: "done", text: "" };
      failed = true;
      if (!stopped) {
        const ref = incident(this.deps.log, error, "Teller turn failed", { conversation: conversation.id, user: attempt.user });
        await this.deps.outbox.add(conversation.id, apology(ref), `error:${consumed[0]?.id ?? first.id}`);
      }
    } finally {
      this.turns.delete(conversation.id);
      this.turnFirings.delete(conversation.id);
      this.turnAnswers.delete(conversation.id);
      answers?.close();
    }
    const firingId = firings2.values().next().value;
    const texts = session.records.slice(this.turnFrom(session, turnStart, consumed)).filter(isTextAnswer);
    for (const record of texts) await this.answer(conversation.id, textOf(record.message), record.id, firings2, false);
    let answered = texts.length > 0 || this.repliedSince(session, turnStart, consumed);
    if (outcome.status === "done" && outcome.text && !answered) {
      await this.deps.outbox.add(conversation.id, outcome.text, `final:${session.records.at(-1).id}`, {}, firingId);
      answered = true;
    }
    const silent = !answered && outcome.status === "done" && !session.records.slice(this.turnFrom(session, turnStart, consumed)).some((record) => isSuccessfulToolResult(record));
    for (const event of consumed) {
      if (event.kind !== "task_results" || stopped) continue;
      const relayed = event.firingId ? await this.deps.outbox.hasFiring(event.firingId) : answered || !failed && !silent;
      if (!relayed) await this.relayResults(event);
    }
    const unanswered = consumed.find((event) => event.kind !== "task_results");
    if (silent && !failed && unanswered) {
      await this.deps.outbox.add(conversation.id, `Sorry \u2014 I could not come up with an answer to that: ${whatWentWrong(session.records.slice(turnStart))}. Please try again or rephrase.`, `silent:${unanswered.id}`);
    }
    await this.done(consumed);
    this.deps.observer?.turnEnded(failed ? "failed" : "completed");
  }
  /** Posts an answer the Teller gave in text; a turn that handles a scheduled report posts it as that report. */
  async answer(conversation, text, recordId, firings2, fresh, live) {
    const record = await this.deps.outbox.add(conversation, { text, live: live?.id }, `final:${recordId}`, {}, firings2.values().next().value, fresh);
    if (live && record.live !== live.id) live.discard();
  }
  /** The events handled: off the log, and off the inbox. */
  async done(events2) {
    await this.deps.store.save({ eventsDone: events2.map((event) => event.id) });
    for (const event of events2) this.queued.delete(event.id);
  }
  /** Sends a batch's results to the user as they are, for when the Teller did not relay them. */
  async relayResults(event) {
    const heading = event.firingId ? "Scheduled task report" : "Results of your tasks";
    await this.deps.outbox.add(event.conversation, `${heading}:

${readableReport(event.text)}`, `report:${event.id}`, {}, event.firingId);
  }
  /** Did the Teller call reply during this turn (including before a crash that replayed it)? */
  repliedSince(session, turnStart, consumed) {
    return session.records.slice(this.turnFrom(session, turnStart, consumed)).some((record) => isSuccessfulToolResult(record, "reply"));
  }
  /** Where this turn's records begin: at its first event's, when the turn is a replay after a
   *  crash (what it did before the crash counts), else where this run started. */
  turnFrom(session, turnStart, consumed) {
    const firstEvent = session.records.findIndex((record) => consumed.some((event) => event.id === record.eventId));
    return firstEvent >= 0 ? Math.min(firstEvent, turnStart) : turnStart;
  }
  /** Opens the conversation's Teller session; the caller releases it. */
  async tellerSession(conversation) {
    const info = conversation.tellerSessionId ? this.infoOf(conversation.id, conversation.user, conversation.tellerSessionId) : await this.sessionInfo(conversation.id, conversation.user);
    conversation.tellerSessionId = info.id;
    return this.deps.sessions.open(info);
  }
  /** The conversation's Teller session as on record, or a new one written now. */
  async sessionInfo(conversation, user) {
    const record = await this.deps.store.conversation(conversation);
    if (record) return this.infoOf(conversation, user, record.tellerSessionId);
    const session = this.infoOf(conversation, user, newId());
    await this.deps.store.save({ conversations: [{ id: conversation, user, tellerSessionId: session.id }], sessions: [session] });
    this.deps.sessions.adopt(session);
    return session;
  }
  infoOf(conversation, user, id) {
    return { id, role: "teller", agent: "teller", conversation, user, createdAt: (/* @__PURE__ */ new Date()).toISOString() };
  }
};
function whatWentWrong(records) {
  for (let i = records.length - 1; i >= 0; i--) {
    const message = records[i].message;
    if (message.role !== "tool") continue;
    const error = message.content.find((part) => part.type === "tool-result" && part.output.type === "error-text");
    if (error?.type === "tool-result") return `my tools kept failing (${error.toolName.slice(0, 80)})`;
  }
  return "the model gave no answer";
}
function isTextAnswer(record) {
  const { message } = record;
  return message.role === "assistant" && record.kind !== "summary" && toolCalls(message).length === 0 && textOf(message) !== "";
}
function isSuccessfulToolResult(record, tool2) {
  const { message } = record;
  return message.role === "tool" && message.content.some((part) => part.type === "tool-result" && !part.output.type.startsWith("error") && (tool2 === void 0 || part.toolName === tool2));
}

// src/supervisor/id-prefix.ts
var MIN_PREFIX = 4;
function resolveId(given, candidates, what = "task or schedule") {
  const wanted = given.trim();
  const ids = [...new Set(candidates)];
  if (ids.includes(wanted)) return { id: wanted };
  if (wanted.length < MIN_PREFIX) return { error: `"${wanted}" is too short: give at least ${MIN_PREFIX} characters of the ${what}'s id`, unknown: true };
  const upper = wanted.toUpperCase();
  const matches = ids.filter((id) => id.toUpperCase().startsWith(upper));
  if (matches.length === 1) return { id: matches[0] };
  if (matches.length === 0) return { error: `no ${what} has an id starting with "${wanted}"`, unknown: true };
  return { error: `"${wanted}" is ambiguous: it starts ${matches.length} ids (${matches.slice(0, 5).join(", ")}${matches.length > 5 ? ", \u2026" : ""}); give more characters`, unknown: false };
}

// src/supervisor/stop-button.ts
var STOP_ACTION = "stop:";
var STOPPED_BY_BUTTON = "stopped by the user (Stop button)";
var TASK_ENDED = "This task has already ended; there is nothing to stop.";
var NOT_YOUR_TASK = "Someone else asked for this task; only they can stop it.";
var stopButton = (headId) => ({ id: `${STOP_ACTION}${headId}`, label: "Stop" });
var isStopPress = (message) => message.action?.startsWith(STOP_ACTION) === true;
async function pressStop(message, deps) {
  const id = message.action.slice(STOP_ACTION.length);
  const head = deps.task(id);
  if (!head || head.conversation !== message.conversation) return TASK_ENDED;
  if (head.user !== message.user && !deps.isOwner(message.user)) return NOT_YOUR_TASK;
  return await deps.abort(id, STOPPED_BY_BUTTON) ? void 0 : TASK_ENDED;
}

// src/supervisor/task-listing.ts
init_list_tasks();
async function listTasks(from, caller, filter) {
  if (filter.scope === "finished") {
    const ended = await from.store.finishedTasks(caller.conversation, { limit: Math.min(filter.limit ?? DEFAULT_PAGE, MAX_PAGE), before: filter.before });
    return ended.map(taskSummary);
  }
  const statuses = filter.scope === "queue" ? ["queued"] : filter.scope === "running" ? ["running"] : filter.scope === "all" ? ["queued", "running"] : [];
  const tasks2 = [...from.live].filter((task) => task.conversation === caller.conversation && statuses.includes(task.status) && (!filter.role || task.role === filter.role)).map(taskSummary);
  const withTriggers = (filter.scope === "triggers" || filter.scope === "all") && !filter.role;
  const zone = from.timeZoneOf(caller.user);
  const triggers2 = withTriggers ? from.scheduler.list(caller.conversation).map((trigger) => triggerSummary(trigger, zone)) : [];
  return [...tasks2, ...triggers2];
}
function taskSummary(task) {
  return { id: task.id, type: task.role === "planner" ? "planner" : task.type, prompt: task.prompt.slice(0, 100), priority: task.priority, status: task.status, createdAt: task.createdAt, endedAt: task.endedAt };
}
function triggerSummary(trigger, zone) {
  return {
    id: trigger.id,
    type: `trigger:${trigger.kind}`,
    prompt: trigger.prompt,
    priority: 5,
    status: trigger.status,
    createdAt: trigger.createdAt,
    nextRunAt: trigger.nextRunAt,
    nextRunLocal: trigger.nextRunAt && shortLocalTime(trigger.nextRunAt, zone),
    lastOutcome: trigger.lastOutcome,
    paused: trigger.status === "paused"
  };
}
function tasksText(tasks2, triggers2, zone) {
  const short = (text) => text.length > 80 ? `${text.slice(0, 80)}\u2026` : text;
  const taskLines = tasks2.map((t) => `\u2022 ${t.id} \u2014 ${t.status}${t.type === "conditional" ? " (waits for its condition)" : ""}, ${t.agent}: ${short(t.prompt)}`);
  const triggerLines = triggers2.map((t) => {
    const next = t.status === "paused" ? "paused" : `next ${t.nextRunAt ?? "when its condition holds"}`;
    const local = t.status === "paused" ? "  \u21B3 paused: /resume to run it again" : t.nextRunAt ? `  \u21B3 next run ${shortLocalTime(t.nextRunAt, zone)}` : void 0;
    return [`\u2022 ${t.id} \u2014 schedule (${t.kind}), ${next}, last ${t.lastOutcome ?? "none yet"}: ${short(t.prompt)}`, ...local ? [local] : []].join("\n");
  });
  const lines = [...taskLines, ...triggerLines];
  return lines.length === 0 ? "No tasks are queued or running, and there are no schedules." : lines.join("\n");
}

// src/supervisor/gate.ts
var NOT_YOUR_QUESTION = "This question was asked of someone else; only they can answer it.";
var InboundGate = class {
  constructor(deps) {
    this.deps = deps;
  }
  deps;
  /** Platform event ids being handled right now: a duplicate racing the first is dropped too. */
  taking = /* @__PURE__ */ new Set();
  /** The commands users may type, for channels that list them. */
  commands() {
    return [...BUILT_IN, ...this.deps.fileCommands.map((c) => ({ name: c.name, description: c.description }))];
  }
  /** What an adapter's `onMessage` answers: a message is durably taken (or ignored) once this
   *  resolves; it rejects when it could not be stored. */
  async take(message) {
    const taken = await this.inbound(message);
    return typeof taken === "object" ? taken : {};
  }
  /** Returns false when nothing was taken (a duplicate or a stranger); an outcome when the
   *  sender is to be told something (see InboundOutcome). */
  async inbound(message) {
    const { store, access, questions: questions2, conversations: conversations2, log } = this.deps;
    const eventId = message.eventId;
    if (eventId !== void 0) {
      const racing = this.taking.has(eventId);
      if (!racing) this.taking.add(eventId);
      if (racing || await store.seen(eventId)) {
        if (!racing) this.taking.delete(eventId);
        log.info({ eventId }, "platform event delivered again; ignored");
        this.deps.observer?.duplicateIgnored();
        return false;
      }
    }
    try {
      if (!await access.allows(message.user)) {
        await access.stranger(message);
        return false;
      }
      if (message.action === void 0 && await this.refused(message, this.deps.quota.rateRefusal(message.user))) return true;
      if (message.timezone !== void 0) await this.deps.profiles.platformTimeZone(message.user, message.timezone);
      if (message.attachments?.length) {
        await this.withFiles(message);
        return true;
      }
      const command = message.action === void 0 ? parseCommand(message.text, this.deps.fileCommands, this.deps.workerTypes) : void 0;
      const forQuestion = message.action !== void 0 || questions2.openIn(message.conversation) !== void 0;
      if (!command && !forQuestion) {
        if (await this.refused(message, await this.deps.quota.tokensNotice(message.user))) return true;
        const queued = conversations2.turnAuthor(message.conversation) !== void 0;
        await conversations2.userMessage(message.conversation, message.user, message.text, message.text, eventId);
        return queued ? { queued } : true;
      }
      if (eventId !== void 0) await store.save({ seen: [eventId] });
      if (isStopPress(message)) {
        const notice = await pressStop(message, { task: (id) => this.deps.board.get(id), abort: (id, reason) => this.deps.board.abort(id, reason), isOwner: (user) => access.isOwner(user) });
        return notice === void 0 ? true : { notice };
      }
      const taken = command ? void 0 : await questions2.take(message);
      if (taken === "stale") log.info({ conversation: message.conversation }, "button of a closed question pressed; ignored");
      if (taken === "not_yours") return { notice: NOT_YOUR_QUESTION };
      if (command) await this.command(message, command);
      else if (!taken) await conversations2.userMessage(message.conversation, message.user, message.text, message.text);
      return true;
    } finally {
      if (eventId !== void 0) this.taking.delete(eventId);
    }
  }
  /** A message a quota refused (`refusal` defined): recorded as seen, so a redelivery is not
   *  taken either, and the sender told why unless they were already ("" ). */
  async refused(message, refusal2) {
    if (refusal2 === void 0) return false;
    if (message.eventId !== void 0) await this.deps.store.save({ seen: [message.eventId] });
    if (refusal2) await this.deps.outbox.add(message.conversation, refusal2, `quota:${message.eventId ?? newId()}`);
    return true;
  }
  /** A message with files: they are saved first (the lines describing them are part of what
   *  is recorded), then the message goes to the Teller like any other — a caption is never
   *  taken as a command or an answer, since the files would be lost with it. */
  async withFiles(message) {
    const { conversations: conversations2, outbox: outbox2, store } = this.deps;
    if (await this.refused(message, await this.deps.quota.tokensNotice(message.user))) return;
    const taken = await this.deps.attachments.take(message.user, message.text, message.attachments ?? []);
    if (taken.text) await conversations2.userMessage(message.conversation, message.user, taken.text, taken.text, message.eventId, taken.images);
    else if (message.eventId !== void 0) await store.save({ seen: [message.eventId] });
    if (taken.notices.length > 0) await outbox2.add(message.conversation, taken.notices.join("\n"), `files:${message.eventId ?? newId()}`);
  }
  async command(message, command) {
    const { conversation, user } = message;
    const { board, conversations: conversations2, scheduler } = this.deps;
    const origin = `command:${message.eventId ?? newId()}`;
    const typed = { history: [{ id: newId(), conversation, role: "user", text: message.text }] };
    const answer2 = (text) => this.deps.outbox.add(conversation, text, origin, typed);
    const scope = this.deps.access.isOwner(user) ? void 0 : user;
    switch (command.kind) {
      case "help":
        return void await answer2(helpText(this.commands(), this.deps.access.isOwner(user)));
      case "tasks":
        return void await answer2(tasksText(board.openIn(conversation), scheduler.list(conversation), this.deps.profiles.timeZoneOf(user)));
      case "cancel": {
        if (!command.id) return void await answer2("Usage: /cancel <task id> (see /tasks)");
        const resolved = board.resolve(conversation, command.id, scope);
        if ("error" in resolved) return void await answer2(resolved.unknown ? `No queued or running task or schedule ${command.id} in this conversation.` : resolved.error);
        const id = resolved.id;
        const task = board.get(id);
        const ok = await scheduler.cancel(id, conversation) || task?.conversation === conversation && await board.abort(id, "cancelled by the user");
        return void await answer2(ok ? `Cancelled ${id}.` : `No queued or running task or schedule ${command.id} in this conversation.`);
      }
      case "pause":
      case "resume":
        return void await answer2(await this.pauseOrResume(command.kind, conversation, user, command.id, scope));
      case "stop":
        return void await answer2(await this.stop(conversation, scope));
      case "timezone":
        return void await answer2(await this.timeZoneCommand(user, command.zone));
      case "memory":
        return void await answer2(await this.deps.memoryOverview(user));
      case "new": {
        const busy = this.othersAtWork(conversation, scope);
        if (busy) return void await answer2(`A request of ${busy} is still being handled here; /new would cut it short. Try again once it is done.`);
        await conversations2.newTellerSession(conversation, user);
        await answer2("Started a fresh conversation. What I remembered is still there.");
        return conversations2.resume(conversation);
      }
      case "pairing":
        return void await answer2(await this.pairingCommand(user, command.args));
      case "worker":
        return board.startCommand(message, origin, command.agent, command.prompt, `@${command.agent}`, typed);
      case "file": {
        const prompt = await resolveParts(command.prompt, command.command.parts, { workspace: this.deps.workspaceOf(user), workerTypes: this.deps.workerTypes });
        if (command.command.subtask) return board.startCommand(message, origin, command.command.agent, prompt, `/${command.command.name}`, typed);
        return conversations2.userMessage(conversation, user, message.text, prompt);
      }
    }
  }
  /** /pause and /resume: a schedule of this conversation, by id or unique prefix. */
  async pauseOrResume(kind, conversation, user, given, scope) {
    const { scheduler, profiles: profiles2 } = this.deps;
    if (!given) return `Usage: /${kind} <schedule id> (see /tasks)`;
    const schedules = scheduler.list(conversation).filter((trigger) => scope === void 0 || trigger.user === scope);
    const resolved = resolveId(given, schedules.map((trigger) => trigger.id), "schedule");
    if ("error" in resolved) return `Could not ${kind}: ${resolved.error}.`;
    const changed = kind === "pause" ? await scheduler.pauseTrigger(resolved.id, conversation) : await scheduler.resumeTrigger(resolved.id, conversation);
    if (typeof changed === "string") return `Could not ${kind}: ${changed}.`;
    if (changed.status === "paused") return `Paused ${changed.id}: it will not run until you /resume it.`;
    if (changed.status === "ended") return `${changed.id} ended: ${changed.endReason}.`;
    const next = changed.nextRunAt ? `next run ${shortLocalTime(changed.nextRunAt, profiles2.timeZoneOf(user))}` : "it waits for its condition again";
    return `Resumed ${changed.id}: ${next}. Runs missed while paused are not caught up.`;
  }
  /** /stop: the Teller's turn and every task of the conversation, with the tasks they started
   *  (`scope`'s only, when given). */
  async stop(conversation, scope) {
    const turn = this.deps.conversations.stopTurn(conversation, scope);
    const tasks2 = await this.deps.board.stopAll(conversation, "stopped by the user (/stop)", scope);
    if (!turn && tasks2.length === 0) return "Nothing is running here.";
    const parts = [...turn ? ["the reply I was writing"] : [], ...tasks2.length ? [`${tasks2.length} task${tasks2.length === 1 ? "" : "s"} (${tasks2.join(", ")})`] : []];
    return `Stopped ${parts.join(" and ")}. Schedules stay; /pause one to hold it.`;
  }
  /** Who else's work /new would cut short (`scope` set: the user is no owner): a turn running for
   *  them, or the Teller's open question to them. */
  othersAtWork(conversation, scope) {
    if (scope === void 0) return void 0;
    const others = [this.deps.conversations.turnAuthor(conversation), this.deps.questions.openIn(conversation, "ask_user")?.user];
    return others.find((other) => other !== void 0 && other !== scope);
  }
  async timeZoneCommand(user, zone) {
    const { profiles: profiles2 } = this.deps;
    if (!zone) {
      const source = { user: "set by you", platform: "from your chat profile", default: "Steward's default" }[profiles2.sourceOf(user)];
      return `Your time zone is ${profiles2.timeZoneOf(user)} (${source}). Set it with /timezone <IANA name>, e.g. /timezone Europe/Berlin.`;
    }
    const set = await profiles2.setTimeZone(user, zone);
    if ("error" in set) return `Could not set the time zone: ${set.error}.`;
    return `Your time zone is now ${set.timeZone}; it is ${shortLocalTime(/* @__PURE__ */ new Date(), set.timeZone)} there. New schedules and the times I show use it.`;
  }
  async pairingCommand(user, args) {
    const { access } = this.deps;
    if (!access.isOwner(user)) return "Only the owner may do that.";
    if (args[0] === "approve" && args[1]) {
      const result2 = await access.approve(args[1]);
      return "error" in result2 ? `Could not approve: ${result2.error}.` : `Approved ${result2.user}.`;
    }
    if (args[0] === "list") {
      const pending = access.pending();
      return pending.length === 0 ? "No pairing requests." : pending.map((p) => `\u2022 ${p.code} \u2014 ${p.user} (until ${p.expiresAt})`).join("\n");
    }
    return "Usage: /pairing approve <code>, /pairing list";
  }
};
function helpText(commands, owner) {
  const lines = commands.filter((command) => owner || !command.ownerOnly).map((command) => `/${command.name} \u2014 ${command.description}`);
  return ["Commands:", ...lines, "Anything else you write goes to Steward."].join("\n");
}

// src/supervisor/recovery.ts
async function recover(parts) {
  await parts.outbox.load();
  parts.board.load(parts.shared ? await parts.store.liveTasks() : await requeueInterrupted(parts.store, parts.log));
  await parts.conversations.load();
  await parts.board.reportEnded();
  await parts.access.load();
  await parts.questions.load();
  await parts.scheduler.start();
  parts.board.resume();
  parts.conversations.resume();
}
async function requeueInterrupted(store, log) {
  const tasks2 = await store.liveTasks();
  for (const [index, task] of tasks2.entries()) {
    if (task.status !== "running") continue;
    const update = interrupted(task, true);
    await store.save({ tasks: [update] });
    tasks2[index] = update;
    log.warn({ task: task.id, failed: update.status === "failed" }, "task was running when Steward stopped");
  }
  return tasks2;
}

// src/supervisor/runner.ts
init_permission();
init_roles();
var QuotaReached = class extends Error {
  name = "QuotaReached";
};
var AgentRunner = class {
  constructor(deps) {
    this.deps = deps;
  }
  deps;
  agentTools = /* @__PURE__ */ new Map();
  async run({ agent, session, signal, where, takeInput, taskId, askedAt, onTool, onAnswer, answers }) {
    const role = agent.role;
    const { config, rules } = this.deps;
    const refusal2 = await this.deps.mayRun?.(where.user);
    if (refusal2) throw new QuotaReached(refusal2);
    const memory = role === "worker" ? "" : await this.deps.memorySnapshot(where.user);
    const instructions = role === "worker" ? this.deps.workerInstructions?.() ?? "" : "";
    return runLoop({
      model: this.deps.model(agent),
      system: instructions ? `${agent.prompt}

${instructions}` : agent.prompt,
      vision: config.attachments.vision,
      // The user's memory.md: long-lived context after the instructions, changed only with the note.
      longLived: memory || void 0,
      environment: () => environment(/* @__PURE__ */ new Date(), where, this.deps.timeZoneOf(where.user)),
      budgetTokens: config.contextBudgetTokens,
      onUsage: this.deps.onUsage,
      compactionSystem: this.deps.agents.compaction.prompt,
      tools: this.toolsOf(agent),
      rules: rules[role],
      log: session,
      context: { role, agent: agent.name, conversation: where.conversation, user: where.user, sessionId: session.info.id, taskId, askedAt, abort: signal, ...this.deps.capabilities },
      maxSteps: config.maxSteps[role],
      maxRetries: config.maxRetries,
      usableTokens: config.context.contextTokens - config.context.outputTokens,
      takeInput,
      onTool,
      onAnswer,
      answers,
      onCompacted: role === "teller" ? (summary) => this.deps.recordCompaction(where.user, summary) : void 0
    });
  }
  /** Runs a task: the Planner, or its worker type, given the task's prompt once. */
  runTask(task, session, signal, onTool) {
    const agent = task.role === "planner" ? this.deps.agents.planner : this.deps.agents.workers.get(task.agent);
    if (!agent) return Promise.reject(new Error(`unknown worker type "${task.agent}"`));
    const takeInput = () => session.has(task.id) ? [] : [{ eventId: task.id, text: task.prompt, fromUser: true }];
    return this.run({ agent, session, signal, where: task, takeInput, taskId: task.id, askedAt: task.createdAt, onTool });
  }
  /** The tools an agent is offered: what its role's rules do not disable and the role table
   *  does not withhold, narrowed by its own `tools` list. Computed once per agent, so the loop
   *  can reuse the SDK's tool objects. */
  toolsOf(agent) {
    let tools = this.agentTools.get(agent.name);
    if (!tools) {
      const role = agent.role;
      const off = disabled(this.deps.tools.map((tool2) => tool2.id), this.deps.rules[role]);
      for (const id of withheldTools(role)) off.add(id);
      tools = this.deps.tools.filter((tool2) => !off.has(tool2.id) && (!agent.tools || agent.tools.includes(tool2.id)));
      this.agentTools.set(agent.name, tools);
    }
    return tools;
  }
};

// src/supervisor/schedules.ts
init_roles();

// src/quota/schedule-quota.ts
init_cron();
var CRON_RUNS_LOOKED_AT = 200;
function shortestCronGap(expression, timezone, from = /* @__PURE__ */ new Date()) {
  const read = parseCron(expression, timezone);
  if ("error" in read) return Number.POSITIVE_INFINITY;
  let shortest = Number.POSITIVE_INFINITY;
  let previous = read.schedule.next(from);
  for (let run = 0; previous && run < CRON_RUNS_LOOKED_AT; run++) {
    const next = read.schedule.next(previous);
    if (!next) break;
    shortest = Math.min(shortest, (next.getTime() - previous.getTime()) / 1e3);
    previous = next;
  }
  return shortest;
}
function scheduleRefusal(quotas, request, theirs, replacing) {
  if (request.type !== "recurring") return void 0;
  const gap = request.interval ?? shortestCronGap(request.cron, request.timezone);
  if (gap < quotas.minIntervalSeconds) {
    return `this schedule would run every ${gap} s, and yours may run at most every ${quotas.minIntervalSeconds} s (QUOTA_MIN_INTERVAL_SECONDS); choose a longer interval`;
  }
  const recurring = theirs.filter((trigger) => trigger.kind === "recurring" && trigger.id !== replacing).length;
  if (recurring >= quotas.schedules) {
    return `you have ${recurring} recurring schedules, the most you may have (QUOTA_SCHEDULES=${quotas.schedules}); cancel one you no longer need first`;
  }
  return void 0;
}

// src/supervisor/schedules.ts
init_tool();
var Schedules = class {
  constructor(deps) {
    this.deps = deps;
  }
  deps;
  /** Creates a trigger, or with `triggerId` (an id or a unique prefix) redefines one of this
   *  conversation in place. A cron expression without a zone is read in the user's zone, which
   *  is fixed on the trigger when it is made. */
  async schedule(caller, request) {
    if (request.target !== void 0) await this.checkTarget(request.target, caller.user);
    const { scheduler } = this.deps;
    const zoned = request.cron !== void 0 && request.timezone === void 0 ? { ...request, timezone: this.deps.timeZoneOf(caller.user) } : request;
    const origin = `${caller.sessionId}:${caller.callId}`;
    if (zoned.triggerId === void 0) {
      await this.checkQuota(caller.user, zoned, await scheduler.createdBy(origin));
      return scheduler.create(zoned, { conversation: caller.conversation, user: caller.user, origin, askedAt: caller.askedAt });
    }
    const resolved = resolveId(zoned.triggerId, scheduler.list(caller.conversation).map((trigger) => trigger.id), "schedule");
    if ("error" in resolved) throw new ToolError(`triggerId: ${resolved.error}`);
    await this.checkQuota(caller.user, zoned, resolved.id);
    const edited = await scheduler.editTrigger(resolved.id, zoned, caller.conversation);
    if (typeof edited === "string") throw new ToolError(edited);
    return { taskId: edited.id };
  }
  /** Something the trigger's owner must hear that no run will report (the Scheduler's host). */
  async notify(trigger, text) {
    await this.deps.outbox.add(trigger.conversation, text, `notice:${trigger.id}:${newId()}`, {}, void 0, true);
  }
  /** Records a scheduled report's delivery on its firing; a report given up is also told to the
   *  trigger's owner, so no schedule fails silently. */
  async settled(record) {
    if (!record.firingId) return;
    const { scheduler, outbox: outbox2 } = this.deps;
    try {
      if (record.status === "delivered") return await scheduler.delivered(record.firingId, record.messageId);
      await scheduler.deliveryFailed(record.firingId, record.error ?? "not delivered");
      const triggerId = record.firingId.split("/")[0];
      const owner = await scheduler.owner(triggerId);
      if (owner && owner !== record.conversation) {
        await outbox2.add(owner, `A scheduled report could not be delivered to ${record.conversation} (reference ${record.id}).`, `undelivered:${record.id}`);
      }
    } catch (error) {
      this.deps.log.error({ err: error, firing: record.firingId }, "could not record a report's delivery");
    }
  }
  /** A user who is not an owner keeps to QUOTA_SCHEDULES and QUOTA_MIN_INTERVAL_SECONDS. */
  async checkQuota(user, request, replacing) {
    if (this.deps.access.isOwner(user)) return;
    const refusal2 = scheduleRefusal(this.deps.quotas, request, this.deps.scheduler.inForce(user), replacing);
    if (refusal2) throw new ToolError(refusal2);
  }
  /** A report target must be a conversation of a channel that runs here, and one the user may
   *  post to (the role table's mayReportTo). */
  async checkTarget(target, user) {
    const channels = this.deps.outbox.channelNames();
    if (!/^[a-z]+:\S+$/.test(target) || !channels.includes(channelOf(target))) {
      throw new ToolError(`target "${target}" is not a conversation of a running channel: expected <channel>:<id> with channel one of ${channels.join(", ")}`);
    }
    const owner = this.deps.access.isOwner(user);
    if (!mayReportTo({ id: user, owner }, owner ? void 0 : await this.deps.userOf(target))) {
      throw new ToolError(`target "${target}" is not a conversation of yours; reports can go to this conversation or another of your own`);
    }
  }
};

// src/supervisor/task-board.ts
init_types();
init_roles();
init_condition();
init_tool();

// src/supervisor/batch-status.ts
init_types();
var TITLE_LIMIT = 60;
function taskTitle(task) {
  const line = task.prompt.trim().split("\n")[0].replace(/\s+/g, " ").trim();
  const text = task.command ? `${task.command} ${line}`.trim() : line || "a task";
  if (text.length <= TITLE_LIMIT) return text;
  const cut = text.slice(0, TITLE_LIMIT - 1);
  const word = cut.lastIndexOf(" ");
  return `${word > TITLE_LIMIT / 2 ? cut.slice(0, word) : cut}\u2026`;
}
var BatchStatus = class {
  constructor(deps) {
    this.deps = deps;
  }
  deps;
  batches = /* @__PURE__ */ new Map();
  /** A task of a batch began running (or was found running elsewhere in a cluster). */
  started(task) {
    const head = this.headOf(task);
    if (!head || head.quiet) return;
    const batch = this.batches.get(head.id) ?? { head, startedAt: head.startedAt ?? task.startedAt ?? (/* @__PURE__ */ new Date()).toISOString(), tools: /* @__PURE__ */ new Map() };
    this.batches.set(head.id, batch);
    this.show(batch);
  }
  tool(task, summary) {
    const batch = this.batchOf(task);
    if (!batch) return;
    batch.tools.set(task.id, (batch.tools.get(task.id) ?? []).filter((tool2) => tool2.id !== summary.id).concat(summary));
    this.show(batch);
  }
  /** A task ended (its record already says how): once its whole batch has, the status says how it ended. */
  ended(task) {
    const batch = this.batchOf(task);
    if (!batch) return;
    batch.tools.delete(task.id);
    const tasks2 = this.endedBatch(batch.head.id);
    if (!tasks2) return this.show(batch);
    this.batches.delete(batch.head.id);
    const outcome = tasks2.some((t) => t.status === "cancelled") ? "stopped" : tasks2.some((t) => t.status !== "completed") ? "failed" : "done";
    this.deps.show(batch.head.conversation, { ...this.common(batch), state: "done", tools: [], outcome });
  }
  show(batch) {
    const tools = [...batch.tools.values()].flat();
    this.deps.show(batch.head.conversation, { ...this.common(batch), state: "running", tools, stop: stopButton(batch.head.id) });
  }
  common(batch) {
    return { taskId: batch.head.id, agent: batch.head.agent, title: taskTitle(batch.head), startedAt: batch.startedAt };
  }
  headOf(task) {
    return isBatchHead(task) ? task : this.deps.task(task.parentTaskId);
  }
  batchOf(task) {
    const head = this.headOf(task);
    return head && this.batches.get(head.id);
  }
  /** The batch's tasks once every one has ended (as the report counts them: a conditional task
   *  is a batch of its own), else undefined. */
  endedBatch(headId) {
    const head = this.deps.task(headId);
    if (!head || !TERMINAL.has(head.status)) return void 0;
    const tasks2 = [head, ...(head.children ?? []).map((id) => this.deps.task(id)).filter((child) => child?.type !== "conditional")];
    return tasks2.every((t) => t && TERMINAL.has(t.status)) ? tasks2 : void 0;
  }
};

// src/supervisor/queue.ts
var TaskQueue = class {
  items = [];
  seq = 0;
  get size() {
    return this.items.length;
  }
  push(id, priority) {
    const item = { id, priority, seq: this.seq++ };
    let lo = 0;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = lo + hi >>> 1;
      const other = this.items[mid];
      if (other.priority > item.priority || other.priority === item.priority && other.seq < item.seq) lo = mid + 1;
      else hi = mid;
    }
    this.items.splice(lo, 0, item);
  }
  shift() {
    return this.items.shift()?.id;
  }
  remove(id) {
    const at2 = this.items.findIndex((item) => item.id === id);
    if (at2 >= 0) this.items.splice(at2, 1);
    return at2 >= 0;
  }
};

// src/supervisor/task-board.ts
var Cancelled = class extends Error {
};
var TaskBoard = class {
  constructor(deps) {
    this.deps = deps;
    this.status = new BatchStatus({ task: (id) => this.tasks.get(id), show: deps.progress });
  }
  deps;
  tasks = /* @__PURE__ */ new Map();
  byOrigin = /* @__PURE__ */ new Map();
  workerQueue = new TaskQueue();
  plannerQueue = new TaskQueue();
  running = /* @__PURE__ */ new Map();
  status;
  /** Task runs under way, so stop() can wait for them. */
  inflight = /* @__PURE__ */ new Set();
  /** Batch heads stopped by /stop: their end wakes nobody (the user asked for silence). */
  silenced = /* @__PURE__ */ new Set();
  /** Batch heads whose report is being written. */
  reporting = /* @__PURE__ */ new Set();
  /** Takes the tasks found at start-up (see recovery.ts): queued one-shot tasks join their queue;
   *  conditional ones wait for their condition once the scheduler runs (resume). */
  load(tasks2) {
    for (const task of tasks2) this.track(task);
    for (const task of this.tasks.values()) if (task.status === "queued" && task.type !== "conditional") this.queueOf(task).push(task.id, task.priority);
  }
  /** Wakes the Teller for every batch that ended but was not reported before a stop. */
  async reportEnded() {
    for (const task of this.tasks.values()) if (TERMINAL.has(task.status)) await this.reportIfDone(task);
  }
  /** Starts the condition waits and the queues; a task still running (in another process of a
   *  cluster, see recovery.ts) is followed to its end. */
  resume() {
    for (const task of this.tasks.values()) {
      if (task.status === "queued" && task.type === "conditional") this.awaitCondition(task);
      if (task.status === "running") this.execute(task, true);
    }
    this.dispatch();
  }
  /** Aborts running tasks and waits for them to wind down; they go back to the queue (a
   *  shutdown is not a crash, the attempt does not count) or, in a cluster, run on elsewhere. */
  async stop() {
    for (const controller of this.running.values()) controller.abort(new Error("Steward is stopping"));
    await Promise.allSettled(this.inflight);
  }
  get busy() {
    return this.running.size > 0 || this.workerQueue.size > 0 || this.plannerQueue.size > 0;
  }
  /** Tasks waiting for a slot, by role (conditional tasks join their queue once they hold). */
  queueDepth() {
    return { planner: this.plannerQueue.size, worker: this.workerQueue.size };
  }
  /** Conversations with a task running now. */
  runningIn() {
    return new Set([...this.running.keys()].flatMap((id) => this.tasks.get(id)?.conversation ?? []));
  }
  get(taskId) {
    return this.tasks.get(taskId);
  }
  /** A conversation's tasks that have not ended, oldest first. */
  openIn(conversation) {
    return [...this.tasks.values()].filter((task) => task.conversation === conversation && !TERMINAL.has(task.status));
  }
  // ── the task capability (delegate, list_tasks, cancel_task) ─────────────────
  async delegate(caller, request) {
    const origin = `${caller.sessionId}:${caller.callId}`;
    const known = this.byOrigin.get(origin) ?? this.tasks.get(caller.taskId ?? "")?.staged?.find((t) => t.origin === origin)?.id ?? (caller.fresh ? void 0 : (await this.deps.store.taskByOrigin(origin))?.id);
    if (known) return { taskId: known };
    const role = delegateTarget(caller.role);
    if (!role) throw new ToolError(refusal(caller.role, "delegate"));
    const continued = request.sessionId ? await this.deps.sessions.exists(request.sessionId) : void 0;
    const continues = continued !== void 0 && continued.conversation === caller.conversation && continued.role === role && !sessionInUse(this.tasks.values(), continued.id);
    const task = {
      ...newTask(caller, origin, role, role === "planner" ? "planner" : request.worker ?? DEFAULT_WORKER),
      type: request.type,
      condition: request.condition,
      prompt: request.prompt,
      priority: request.priority,
      timeout: request.timeout,
      sessionId: continues ? continued.id : newId(),
      continuesSession: continues || void 0
    };
    if (role === "worker") {
      const planner = this.tasks.get(caller.taskId);
      const update = { ...planner, staged: [...planner.staged ?? [], task] };
      await this.deps.store.save({ tasks: [update] });
      this.track(update);
      return { taskId: task.id };
    }
    const session = continues ? void 0 : sessionOf(task);
    await this.deps.store.save({ tasks: [task], sessions: session ? [session] : [] });
    if (session) this.deps.sessions.adopt(session);
    this.track(task);
    this.plannerQueue.push(task.id, task.priority);
    this.dispatch();
    return { taskId: task.id };
  }
  listTasks(caller, filter) {
    return listTasks({ ...this.deps, live: this.tasks.values() }, caller, filter);
  }
  /** Which open task or schedule of the conversation `given` (an id or unique prefix) names:
   *  of `user`'s, when given (in a shared conversation one person's are not another's). */
  resolve(conversation, given, user) {
    return resolveId(given, [...this.openIn(conversation), ...this.deps.scheduler.list(conversation)].filter((item) => user === void 0 || item.user === user).map((item) => item.id));
  }
  /** Cancels a queued task of the caller's conversation; a running one is not touched (seed 002).
   *  An unknown id is `false`; an ambiguous prefix is an error the model reads. */
  async cancelTask(caller, given) {
    const resolved = this.resolve(caller.conversation, given, caller.user);
    if ("error" in resolved) {
      if (resolved.unknown) return false;
      throw new ToolError(resolved.error);
    }
    const taskId = resolved.id;
    if (await this.deps.scheduler.cancel(taskId, caller.conversation)) return true;
    const task = this.tasks.get(taskId);
    if (!task || task.conversation !== caller.conversation || task.status !== "queued") return false;
    await this.finish(task, { status: "cancelled", error: "cancelled before it started" });
    return true;
  }
  /** /stop: aborts the conversation's open tasks (`user`'s, if given) with what they committed; their results wake nobody. Returns the ids. */
  async stopAll(conversation, reason, user) {
    const open4 = this.openIn(conversation).filter((task) => user === void 0 || task.user === user);
    for (const task of open4) this.silenced.add(isBatchHead(task) ? task.id : task.parentTaskId);
    const stopped = [];
    for (const task of open4) if (await this.abort(task.id, reason)) stopped.push(task.id);
    return stopped;
  }
  /** Aborts a task and, through their parent link, every task it committed — also when the
   *  task itself has already ended (a Planner ends before its workers run). */
  async abort(taskId, reason = "cancelled") {
    const task = this.tasks.get(taskId);
    if (!task) return false;
    let aborted = false;
    for (const child of [...this.tasks.values()]) if (child.parentTaskId === taskId) aborted = await this.abort(child.id, reason) || aborted;
    if (TERMINAL.has(task.status)) return aborted;
    if (task.status === "running") this.running.get(task.id)?.abort(new Cancelled(reason));
    else await this.finish(task, { status: "cancelled", error: reason });
    return true;
  }
  // ── tasks started without a model deciding ─────────────────────────────────
  /** A task of its own that a command starts (`/review`, `@researcher`); its result wakes the
   *  Teller like any batch. */
  async startCommand(caller, origin, agent, prompt, command, also) {
    const role = agent === "planner" ? "planner" : "worker";
    const sessionId = await this.deps.tellerSessionId(caller.conversation, caller.user);
    await this.enqueue({ ...newTask({ ...caller, sessionId }, origin, role, agent), prompt: prompt || "(no arguments)", command }, also);
  }
  /** A firing's run: a worker task of its own in the report's conversation, whose result wakes
   *  that conversation's Teller. Idempotent by firing, as the Scheduler requires. */
  async startRun(trigger, firing) {
    const origin = `firing:${firing.id}`;
    const known = this.byOrigin.get(origin) ?? (await this.deps.store.taskByOrigin(origin))?.id;
    if (known) return known;
    const sessionId = await this.deps.tellerSessionId(trigger.target ?? trigger.conversation, trigger.user);
    const task = runTask(trigger, firing, sessionId, origin);
    await this.enqueue(task);
    return task.id;
  }
  taskStatus(taskId) {
    return this.tasks.get(taskId)?.status ?? ([...this.tasks.values()].some((planner) => planner.staged?.some((staged) => staged.id === taskId)) ? "queued" : void 0);
  }
  // ── the queues ──────────────────────────────────────────────────────────────
  /** Writes a new task with its session (and whatever else `also` holds) and queues it. */
  async enqueue(task, also = {}) {
    const session = sessionOf(task);
    await this.deps.store.save({ ...also, tasks: [task], sessions: [session] });
    this.deps.sessions.adopt(session);
    this.track(task);
    this.queueOf(task).push(task.id, task.priority);
    this.dispatch();
  }
  /** A conditional task joins the worker queue once its condition holds; one that can never
   *  hold is cancelled with that reason, which reports it. */
  awaitCondition(task) {
    this.deps.scheduler.wait(task.id, task.condition, task.createdAt, (result2) => {
      const current = this.tasks.get(task.id);
      if (current?.status !== "queued") return;
      if (result2 === "holds") {
        this.workerQueue.push(current.id, current.priority);
        this.dispatch();
      } else {
        const why = whyNever(task.condition, (id) => this.deps.scheduler.taskStatus(id));
        this.finish(current, { status: "cancelled", error: `its condition can never hold: ${why}` }).catch((error) => this.deps.log.error({ err: error, task: task.id }, "could not cancel a conditional task"));
      }
    });
  }
  track(task) {
    this.tasks.set(task.id, task);
    this.byOrigin.set(task.origin, task.id);
  }
  queueOf(task) {
    return task.role === "planner" ? this.plannerQueue : this.workerQueue;
  }
  dispatch() {
    if (this.deps.stopping()) return;
    const limit = this.deps.config.workerConcurrency;
    for (const [queue, role] of [[this.workerQueue, "worker"], [this.plannerQueue, "planner"]]) {
      const running = () => [...this.running.keys()].filter((id) => this.tasks.get(id)?.role === role).length;
      while (queue.size > 0 && (this.deps.shared || running() < limit)) {
        const task = this.tasks.get(queue.shift());
        if (task?.status === "queued") this.execute(task);
      }
    }
    this.deps.changed();
  }
  /** Runs a queued task (written as running first), or follows one already running (`taken`:
   *  found running at start-up in a cluster). */
  execute(queued, taken = false) {
    const controller = new AbortController();
    this.running.set(queued.id, controller);
    const seconds = queued.timeout ?? this.deps.config.timeouts[queued.role];
    const timer = this.deps.shared ? void 0 : setTimeout(() => controller.abort(new TimedOut(`timed out after ${seconds} s`)), seconds * 1e3);
    const task = taken ? queued : { ...queued, status: "running", attempts: queued.attempts + 1, runs: runOf(queued) + 1, startedAt: now() };
    const run = (taken ? Promise.resolve() : this.deps.store.save({ tasks: [task] })).then(() => {
      this.track(task);
      this.status.started(task);
      return this.deps.run(task, controller.signal, (summary) => this.status.tool(task, summary));
    }).then(
      (outcome) => this.finish(this.tasks.get(task.id), { status: "completed", result: outcome.status === "done" ? outcome.text : "" }),
      (error) => {
        if (error instanceof HandedOver) return;
        if (error instanceof Interrupted) return this.requeue(this.tasks.get(task.id), error);
        if (this.deps.stopping()) return this.deps.store.save({ tasks: [interrupted(this.tasks.get(task.id), false)] });
        const why = controller.signal.aborted ? controller.signal.reason : error;
        const status = why instanceof TimedOut ? "timed_out" : why instanceof Cancelled ? "cancelled" : "failed";
        return this.finish(this.tasks.get(task.id), { status, error: status === "failed" ? internalError(this.deps.log, why, "task failed", { task: task.id }) : errorText(why) });
      }
    ).catch((error) => this.deps.log.error({ err: error, task: task.id }, "could not record the end of a task")).finally(() => {
      clearTimeout(timer);
      this.running.delete(task.id);
      this.deps.sessions.forget(task.sessionId);
      this.dispatch();
    });
    this.inflight.add(run);
    void run.finally(() => this.inflight.delete(run));
  }
  /** The process running a task went away: queued again, or failed if interrupted too often. */
  async requeue(task, error) {
    const update = interrupted(task, error.counts, this.deps.shared ? CLUSTER_MAX_TASK_ATTEMPTS : MAX_TASK_ATTEMPTS);
    this.deps.log.warn({ task: task.id, why: error.message, status: update.status }, "task interrupted");
    if (update.status === "failed") return this.finish(task, { status: "failed", error: update.error });
    await this.deps.store.save({ tasks: [update] });
    this.track(update);
    this.queueOf(update).push(update.id, update.priority);
  }
  /** Records a task's end; a Planner's success commits its staged worker tasks in the same write. */
  async finish(task, end) {
    this.queueOf(task).remove(task.id);
    const committed = end.status === "completed" ? (task.staged ?? []).map((child) => ({ ...child, parentTaskId: task.id, createdAt: now() })) : [];
    const update = { ...task, ...end, endedAt: now(), staged: void 0, children: task.role === "planner" ? committed.map((c) => c.id) : void 0 };
    const sessions2 = committed.filter((child) => !child.continuesSession).map((child) => sessionOf(child));
    await this.deps.store.save({ tasks: [update, ...committed], sessions: sessions2 });
    this.track(update);
    for (const session of sessions2) this.deps.sessions.adopt(session);
    for (const child of committed) {
      this.track(child);
      if (child.type === "conditional") this.awaitCondition(child);
      else this.workerQueue.push(child.id, child.priority);
    }
    if (task.type === "conditional") this.deps.scheduler.unwait(task.id);
    await this.deps.scheduler.taskEnded(task.id, update.status);
    this.status.ended(update);
    this.deps.log.info({ task: task.id, role: task.role, status: update.status, committed: committed.length }, "task ended");
    const head = isBatchHead(update) ? update : this.tasks.get(task.parentTaskId);
    if (head) await this.reportIfDone(head);
    this.dispatch();
  }
  /** Wakes the Teller once, when a batch has ended: its head (see isBatchHead) and every one-shot
   *  worker task the head committed. A conditional task reports on its own when it ends. */
  async reportIfDone(head) {
    if (!isBatchHead(head) || head.reported || !TERMINAL.has(head.status)) return;
    const batch = [head, ...(head.children ?? []).map((id) => this.tasks.get(id)).filter((task) => task?.type !== "conditional")];
    if (batch.some((task) => !task || !TERMINAL.has(task.status))) return;
    if (this.reporting.has(head.id)) return;
    this.reporting.add(head.id);
    const quietRun = isQuietRun(head);
    const silent = quietRun || this.silenced.delete(head.id);
    const event = silent ? void 0 : { id: resultsEventId(head.id), conversation: head.conversation, user: head.user, kind: "task_results", text: reportText(batch), createdAt: now(), attempts: 0, firingId: head.firingId };
    const update = { ...head, reported: true };
    try {
      await this.deps.store.save({ tasks: [update], events: event ? [event] : [] });
    } finally {
      this.reporting.delete(head.id);
    }
    this.track(update);
    if (event) this.deps.wake(event);
    else if (quietRun) await this.deps.scheduler.nothingToReport(head.firingId);
  }
};
function now() {
  return (/* @__PURE__ */ new Date()).toISOString();
}

// src/supervisor/supervisor.ts
init_workspace();

// src/quota/note-quota.ts
import { readdir as readdir4, readFile as readFile5 } from "node:fs/promises";
import path6 from "node:path";
init_tool();
async function notesOn(folder, now2) {
  const day = localDay(now2);
  const names2 = await readdir4(path6.join(folder, DAILY_FOLDER)).catch(() => []);
  const daily = names2.filter((name) => name.startsWith(`${day}-`) && name.endsWith(".md") && !name.endsWith("-conversation-summary.md")).length;
  const longTerm = await readFile5(path6.join(folder, LONG_TERM_FILE), "utf8").catch(() => "");
  const entries = longTerm.split("\n").filter((line) => line === `## ${day}`).length;
  return daily + entries;
}
function limitedMemory(memory, guard, folderOf) {
  return {
    search: (user, search) => memory.search(user, search),
    async remember(user, content, longTerm) {
      if (guard.limited(user)) {
        const { memoryNoteChars, memoryNotesPerDay } = guard.quotas;
        if (content.length > memoryNoteChars) throw new ToolError(`the note is ${content.length} characters; yours may hold at most ${memoryNoteChars} (QUOTA_MEMORY_NOTE_CHARS): keep the essentials`);
        const today = await notesOn(folderOf(user), /* @__PURE__ */ new Date());
        if (today >= memoryNotesPerDay) throw new ToolError(`${today} notes were remembered for you today, the most allowed (QUOTA_MEMORY_NOTES_PER_DAY=${memoryNotesPerDay}); try again tomorrow`);
      }
      return memory.remember(user, content, longTerm);
    }
  };
}

// src/quota/message-rate.ts
var MINUTE_MS = 6e4;
var MessageRate = class {
  constructor(perMinute, now2 = Date.now) {
    this.perMinute = perMinute;
    this.now = now2;
  }
  perMinute;
  now;
  sent = /* @__PURE__ */ new Map();
  told = /* @__PURE__ */ new Set();
  admit(user) {
    const now2 = this.now();
    const recent = (this.sent.get(user) ?? []).filter((at2) => at2 > now2 - MINUTE_MS);
    if (recent.length < this.perMinute) {
      recent.push(now2);
      this.sent.set(user, recent);
      if (recent.length === 1) this.told.delete(user);
      return "take";
    }
    this.sent.set(user, recent);
    if (this.told.has(user)) return "refuse";
    this.told.add(user);
    return "slow down";
  }
};

// src/quota/quota-guard.ts
var TOKENS_FRESH_MS = 5e3;
function utcDay(at2) {
  const day = new Date(at2).toISOString().slice(0, 10);
  return { day, start: Date.parse(`${day}T00:00:00Z`) };
}
function tokensByUser(samples) {
  const totals = /* @__PURE__ */ new Map();
  for (const sample2 of samples) if (sample2.user) totals.set(sample2.user, (totals.get(sample2.user) ?? 0) + sample2.input + sample2.output);
  return totals;
}
var QuotaGuard = class {
  constructor(deps) {
    this.deps = deps;
    this.now = deps.now ?? Date.now;
    this.rate = new MessageRate(deps.quotas.messagesPerMinute, this.now);
  }
  deps;
  rate;
  now;
  tokens;
  /** Users told today that their tokens are used up (told once a day, not at every message). */
  toldTokens = /* @__PURE__ */ new Map();
  get quotas() {
    return this.deps.quotas;
  }
  limited(user) {
    return !this.deps.isOwner(user);
  }
  /**
   * QUOTA_MESSAGES_PER_MINUTE: undefined to take the message; otherwise it is not taken, and the
   * text is what the sender is told ("" when they were told already in this burst).
   */
  rateRefusal(user) {
    if (!this.limited(user)) return void 0;
    const admission = this.rate.admit(user);
    if (admission === "take") return void 0;
    if (admission === "refuse") return "";
    return `You are sending messages faster than I take them (${this.quotas.messagesPerMinute} a minute). I skipped the ones after that; please wait a minute and send what still matters.`;
  }
  /** QUOTA_TOKENS_PER_DAY for a message to the Teller: undefined to take it; otherwise it is not
   *  taken, and the text is what the sender is told (once a day; "" after that). */
  async tokensNotice(user) {
    const refusal2 = await this.tokenRefusal(user);
    if (!refusal2) return void 0;
    const today = utcDay(this.now()).day;
    if (this.toldTokens.get(user) === today) return "";
    this.toldTokens.set(user, today);
    return refusal2;
  }
  /** Why a run for `user` may not start now: their model tokens for today are used up. */
  async tokenRefusal(user) {
    if (!this.limited(user)) return void 0;
    const used = await this.tokensToday(user);
    if (used < this.quotas.tokensPerDay) return void 0;
    return `You have used today's ${this.quotas.tokensPerDay} model tokens (QUOTA_TOKENS_PER_DAY); I can work for you again after midnight UTC.`;
  }
  /** A model call's usage was recorded (its store write issued): the next check reads it. */
  usageRecorded() {
    this.tokens = void 0;
  }
  async tokensToday(user) {
    const now2 = this.now();
    const { day, start } = utcDay(now2);
    if (!this.tokens || this.tokens.day !== day || now2 - this.tokens.at > TOKENS_FRESH_MS) {
      const byUser = this.deps.usageSince(start).then(tokensByUser);
      byUser.catch(() => this.tokens = void 0);
      this.tokens = { at: now2, day, byUser };
    }
    return (await this.tokens.byUser).get(user) ?? 0;
  }
};

// src/supervisor/supervisor.ts
var Supervisor = class {
  constructor(deps) {
    this.deps = deps;
    const { config, store, log } = deps;
    const workspaceDir = `${config.dataDir}/workspace`;
    const sessions2 = new Sessions(store);
    this.profiles = new Profiles(store, config.defaultTimeZone, log);
    const timeZoneOf = (user) => this.profiles.timeZoneOf(user);
    const folderOf = (user) => deps.memory.folder(user);
    const stopping = () => this.stopping;
    const changed = () => this.changed();
    this.outbox = new Outbox(store, deps.channels, log, { changed: () => this.checkIdle(), settled: (record) => this.schedules.settled(record) }, { maxReplyMessages: config.maxReplyMessages });
    this.questions = new Questions(store, this.outbox, log, (event) => this.conversations.enqueue(event));
    this.access = new Access(config.allowedUsers, store, this.outbox, log);
    this.quota = new QuotaGuard({ quotas: config.quotas, isOwner: (user) => this.access.isOwner(user), usageSince: (since) => store.owner.usageSince(since) });
    this.scheduler = new Scheduler({
      store,
      host: { startRun: (trigger, firing) => this.tasks.startRun(trigger, firing), taskStatus: (id) => this.tasks.taskStatus(id), notify: (trigger, text) => this.schedules.notify(trigger, text) },
      log: log.child({ module: "scheduler" }),
      onFiring: deps.observer && ((status) => deps.observer.firingReached(status))
    });
    this.conversations = new Conversations({
      store,
      observer: deps.observer,
      outbox: this.outbox,
      questions: this.questions,
      sessions: sessions2,
      log,
      runTeller: (session, signal, where, takeInput, hooks) => runner.run({ agent: deps.agents.teller, session, signal, where, takeInput, ...hooks }),
      changed,
      stopping,
      liveText: (conversation, user) => {
        const channel = this.channelOf(conversation);
        if (!config.streamReplies || !channel?.live) return void 0;
        return (id) => channel.live(conversation, id, user);
      }
    });
    this.schedules = new Schedules({ scheduler: this.scheduler, outbox: this.outbox, access: this.access, userOf: (id) => this.conversations.userOf(id), timeZoneOf, quotas: config.quotas, log });
    this.tasks = new TaskBoard({
      config,
      store,
      sessions: sessions2,
      scheduler: this.scheduler,
      log,
      run: deps.runTask ?? (async (task, signal, onTool) => runner.runTask(task, await sessions2.open(sessionOf(task)), signal, onTool)),
      wake: (event) => this.conversations.enqueue(event),
      tellerSessionId: (conversation, user) => this.conversations.tellerSessionId(conversation, user),
      progress: (conversation, update) => this.channelOf(conversation)?.progress?.(conversation, update),
      changed,
      stopping,
      timeZoneOf,
      shared: deps.shared
    });
    this.capabilities = {
      tasks: this.tasks,
      questions: new Asking(this.questions),
      schedules: this.schedules,
      replies: this.conversations,
      memory: limitedMemory(deps.memory, this.quota, folderOf),
      history: store.history,
      profiles: this.profiles,
      notes: { forget: (user, request) => forgetNotes(folderOf(user), request) },
      workspaceDir
    };
    const runner = this.runner(this.capabilities);
    const workerTypes = new Set(deps.agents.workers.keys());
    const fileCommands = deps.commandsDir ? loadCommands(deps.commandsDir, /* @__PURE__ */ new Set(["teller", "planner", ...workerTypes])) : [];
    this.gate = new InboundGate({
      store,
      observer: deps.observer,
      access: this.access,
      questions: this.questions,
      conversations: this.conversations,
      board: this.tasks,
      scheduler: this.scheduler,
      outbox: this.outbox,
      quota: this.quota,
      attachments: new Attachments({ workspaceDir, uploadsPerDay: (user) => this.quota.limited(user) ? config.quotas.uploadsPerDay : void 0, quotaBytes: config.workspace.quotaBytes, maxBytes: config.attachments.maxBytes, vision: config.attachments.vision, transcribe: transcriber(config), log }),
      profiles: this.profiles,
      memoryOverview: (user) => memoryOverview(folderOf(user)),
      log,
      fileCommands,
      workspaceOf: (user) => userWorkspaceDir(workspaceDir, user),
      workerTypes
    });
    this.controls = new ControlInbox(store, {
      pauseTrigger: async (id, paused) => {
        const changed2 = await (paused ? this.scheduler.pauseTrigger(id) : this.scheduler.resumeTrigger(id));
        return typeof changed2 === "string" ? { error: changed2 } : { done: `trigger ${id} ${paused ? "paused" : "resumed"}` };
      },
      removeTrigger: async (id) => await this.scheduler.cancel(id) ? { done: `trigger ${id} removed` } : { error: `no active trigger ${id}` },
      revokeUser: (user) => this.access.revoke(user),
      cancelTask: async (id) => await this.tasks.abort(id, "cancelled by the owner") ? { done: `task ${id} cancelled` } : { error: `task ${id} is not queued or running` }
    }, log);
  }
  deps;
  outbox;
  access;
  questions;
  scheduler;
  schedules;
  tasks;
  conversations;
  gate;
  controls;
  profiles;
  /** Per-user limits decided at run time (messages per minute, the day's model tokens). */
  quota;
  /** What the tools of a run may use, as this process's parts provide it. */
  capabilities;
  stopping = false;
  /** Called whenever work moves, until Steward is idle. */
  idleWaiters = /* @__PURE__ */ new Set();
  /** Conversations shown as busy ("typing…") to their channel. */
  active = /* @__PURE__ */ new Set();
  /** An agent runner whose tools use `capabilities` (a cluster's task host passes ones that
   *  reach the leader process). */
  runner(capabilities) {
    const { deps } = this;
    return new AgentRunner({
      config: deps.config,
      agents: deps.agents,
      model: deps.model,
      tools: deps.tools,
      rules: deps.rules,
      onUsage: (sample2) => {
        deps.onUsage?.(sample2);
        this.quota.usageRecorded();
      },
      mayRun: (user) => this.quota.tokenRefusal(user),
      workerInstructions: deps.workerInstructions,
      capabilities,
      timeZoneOf: (user) => this.profiles.timeZoneOf(user),
      memorySnapshot: (user) => memorySnapshot(deps.memory.folder(user)),
      recordCompaction: (user, summary) => deps.memory.recordCompaction(user, summary)
    });
  }
  /** Rebuilds every part from the store and starts the queues and turns. */
  async start() {
    const { store, log } = this.deps;
    const { outbox: outbox2, conversations: conversations2, access, questions: questions2, scheduler } = this;
    await this.profiles.load();
    await recover({ store, outbox: outbox2, board: this.tasks, conversations: conversations2, access, questions: questions2, scheduler, log, shared: this.deps.shared ?? false });
    await this.controls.start();
  }
  /** Aborts running work and waits for it to wind down, then for sends under way. Tasks go back
   *  to the queue without counting the attempt — a shutdown is not a crash; turns are replayed
   *  from the log. */
  async stop() {
    this.stopping = true;
    this.controls.stop();
    this.questions.stop();
    await this.scheduler.stop();
    await Promise.all([this.tasks.stop(), this.conversations.stop()]);
    await this.outbox.stop();
  }
  /** Resolves once nothing is queued, running or waiting to be sent. */
  idle() {
    return new Promise((resolve3) => {
      const check = () => {
        if (this.busy) return;
        this.idleWaiters.delete(check);
        resolve3();
      };
      this.idleWaiters.add(check);
      check();
    });
  }
  get busy() {
    return this.tasks.busy || this.conversations.busy || this.outbox.busy;
  }
  changed() {
    this.checkIdle();
    this.showActivity();
  }
  checkIdle() {
    for (const check of [...this.idleWaiters]) check();
  }
  /** Tells channels when a conversation starts or stops having work under way ("typing…"). */
  showActivity() {
    const busy = /* @__PURE__ */ new Set([...this.conversations.inTurn(), ...this.tasks.runningIn()]);
    for (const id of this.active) if (!busy.has(id)) this.channelOf(id)?.activity?.(id, false);
    for (const id of busy) if (!this.active.has(id)) this.channelOf(id)?.activity?.(id, true);
    this.active = busy;
  }
  channelOf(conversation) {
    return this.deps.channels.get(channelOf(conversation));
  }
};

// src/access/same-secret.ts
import { createHash as createHash6, timingSafeEqual } from "node:crypto";
function sameSecret(given, secret) {
  const digest = (text) => createHash6("sha256").update(text).digest();
  return timingSafeEqual(digest(given), digest(secret));
}

// src/hooks/hooks.ts
init_condition();
import { createServer } from "node:http";
var MAX_HOOK_BODY_BYTES = 1024 * 1024;
var HooksServer = class {
  constructor(token, raise, log) {
    this.token = token;
    this.raise = raise;
    this.log = log;
  }
  token;
  raise;
  log;
  server;
  /** Listens on `host` (HOOKS_HOST, 127.0.0.1 by default: a hook from another machine is an
   *  explicit choice of the operator). */
  async start(port2, host) {
    const server = createServer((req, res) => {
      const answer2 = (status, body) => {
        res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
      };
      const match2 = /^\/hooks\/([^/?]+)\/?(?:\?.*)?$/.exec(req.url ?? "");
      const refuse = (status, body) => {
        req.resume();
        answer2(status, body);
      };
      if (req.method !== "POST" || !match2) return refuse(404, { error: "not found: use POST /hooks/<name>" });
      if (!this.authorized(req.headers.authorization)) return refuse(401, { error: "missing or wrong bearer token" });
      const name = decodedSegment(match2[1]);
      if (name === void 0 || !EVENT_NAME.test(name)) return refuse(400, { error: "an event name is 1-64 letters, digits, _ . -" });
      void readBody(req).then((body) => {
        if (body === "too large") return answer2(413, { error: `the body is over ${MAX_HOOK_BODY_BYTES} bytes` });
        if (!emptyOrObject(body)) return answer2(400, { error: "the body must be empty or a JSON object" });
        this.raise(name).then(
          () => answer2(202, { raised: name }),
          (error) => {
            this.log.error({ err: error, event: name }, "could not raise an event");
            answer2(500, { error: "could not record the event" });
          }
        );
      });
    });
    this.server = server;
    await new Promise((resolve3, reject) => {
      server.once("error", reject);
      server.listen(port2, host, () => resolve3());
    });
    return server.address().port;
  }
  async stop() {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise((resolve3) => server.close(() => resolve3()));
  }
  authorized(header) {
    return sameSecret(header?.replace(/^Bearer\s+/i, "") ?? "", this.token);
  }
};
function decodedSegment(segment) {
  try {
    return decodeURIComponent(segment);
  } catch {
    return void 0;
  }
}
function readBody(req) {
  return new Promise((resolve3) => {
    if (Number(req.headers["content-length"] ?? 0) > MAX_HOOK_BODY_BYTES) {
      req.resume();
      return resolve3("too large");
    }
    const chunks = [];
    let size = 0;
    req.on("data", (chunk) => {
      size += chunk.length;
      if (size <= MAX_HOOK_BODY_BYTES) return void chunks.push(chunk);
      chunks.length = 0;
      resolve3("too large");
    });
    req.on("end", () => resolve3(size > MAX_HOOK_BODY_BYTES ? "too large" : Buffer.concat(chunks)));
    req.on("error", () => resolve3("too large"));
  });
}
function emptyOrObject(body) {
  const text = body.toString("utf8").trim();
  if (text === "") return true;
  try {
    const value = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

// src/mcp/health-file.ts
import { readFileSync as readFileSync3, renameSync, writeFileSync as writeFileSync2 } from "node:fs";
import { join as join6 } from "node:path";
function mcpHealthFile(dataDir) {
  return join6(dataDir, "mcp-status.json");
}
var EVERY_MS = 1e3;
function keepHealthFile(file, health) {
  let last = "";
  const write = () => {
    const text = JSON.stringify({ at: (/* @__PURE__ */ new Date()).toISOString(), servers: health() });
    const servers = text.slice(text.indexOf(',"servers"'));
    if (servers === last) return;
    last = servers;
    try {
      writeFileSync2(`${file}.tmp`, text);
      renameSync(`${file}.tmp`, file);
    } catch {
    }
  };
  write();
  const timer = setInterval(write, EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}

// src/search/brave.ts
init_http();
import { z as z12 } from "zod";

// src/search/result.ts
function plain2(html) {
  return html.replace(/<[^>]*>/g, "").replace(/&quot;/g, '"').replace(/&#39;|&#x27;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&").replace(/\s+/g, " ").trim();
}

// src/search/brave.ts
var Answer = z12.object({
  // A query with no web results has no `web` section at all.
  web: z12.object({ results: z12.array(z12.object({ title: z12.string().default(""), url: z12.string(), description: z12.string().nullish() })) }).optional()
});
var MAX_COUNT = 20;
function brave(apiKey, apiUrl, timeoutMs) {
  return {
    name: "brave",
    async search(query, limit, signal) {
      const url = new URL(apiUrl);
      url.searchParams.set("q", query);
      url.searchParams.set("count", String(Math.min(limit, MAX_COUNT)));
      const answer2 = await requestJson("brave", url, { headers: { accept: "application/json", "x-subscription-token": apiKey } }, Answer, signal, timeoutMs);
      return (answer2.web?.results ?? []).slice(0, limit).map((hit) => ({ title: plain2(hit.title), url: hit.url, snippet: plain2(hit.description ?? "") }));
    }
  };
}

// src/search/searxng.ts
init_http();
import { z as z13 } from "zod";
var Answer2 = z13.object({
  results: z13.array(z13.object({ title: z13.string().default(""), url: z13.string(), content: z13.string().nullish() }))
});
function searxng(baseUrl, timeoutMs) {
  return {
    name: "searxng",
    async search(query, limit, signal) {
      const url = new URL("search", baseUrl.endsWith("/") ? baseUrl : `${baseUrl}/`);
      url.searchParams.set("q", query);
      url.searchParams.set("format", "json");
      const answer2 = await requestJson("searxng", url, { headers: { accept: "application/json" } }, Answer2, signal, timeoutMs);
      return answer2.results.slice(0, limit).map((hit) => ({ title: plain2(hit.title), url: hit.url, snippet: plain2(hit.content ?? "") }));
    }
  };
}

// src/search/tavily.ts
init_http();
import { z as z14 } from "zod";
var Answer3 = z14.object({
  results: z14.array(z14.object({ title: z14.string().default(""), url: z14.string(), content: z14.string().nullish() }))
});
function tavily(apiKey, apiUrl, timeoutMs) {
  return {
    name: "tavily",
    async search(query, limit, signal) {
      const init = {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json", authorization: `Bearer ${apiKey}` },
        body: JSON.stringify({ query, max_results: limit })
      };
      const answer2 = await requestJson("tavily", new URL(apiUrl), init, Answer3, signal, timeoutMs);
      return answer2.results.slice(0, limit).map((hit) => ({ title: plain2(hit.title), url: hit.url, snippet: plain2(hit.content ?? "") }));
    }
  };
}

// src/search/provider.ts
var TIMEOUT_MS = 15e3;
function searchProvider(config, timeoutMs = TIMEOUT_MS) {
  switch (config?.provider) {
    case void 0:
      return void 0;
    case "searxng":
      return searxng(config.url, timeoutMs);
    case "brave":
      return brave(config.apiKey, config.apiUrl, timeoutMs);
    case "tavily":
      return tavily(config.apiKey, config.apiUrl, timeoutMs);
  }
}

// src/app.ts
init_registry();
var PROMPTS_DIR = new URL("../prompts/", import.meta.url).pathname;
async function startApp(config, log, channels, memory, modelOf, options = {}) {
  const model = modelOf ?? modelFor(config, options.metrics);
  const promptsDir = options.promptsDir ?? PROMPTS_DIR;
  const agents = loadAgents(promptsDir);
  for (const agent of agents.workers.values()) if (agent.model) checkProvider(specOf(agent), config);
  const workerTypes = [...agents.workers.values()].map((w) => ({ name: w.name, description: w.description }));
  const extra = config.permissionsFile ? readPermissions(config.permissionsFile) : void 0;
  const mcp = config.mcp.configFile ? await (await Promise.resolve().then(() => (init_hub(), hub_exports))).startMcp(config, log, builtInToolIds()) : void 0;
  const stopHealthFile = mcp && keepHealthFile(mcpHealthFile(config.dataDir), () => mcp.health());
  const tools = [...allTools(workerTypes, { fetch: config.fetch, workspace: config.workspace, search: searchProvider(config.search), resources: mcp }), ...mcp?.families() ?? []];
  const rules = { teller: forRole("teller", extra), planner: forRole("planner", extra), worker: forRole("worker", extra, mcp?.grants()) };
  const member = newMemberId();
  const store = await Store.open(config.dataDir, config.storeUrl, { applicationName: connectionTag(member) });
  const cluster = config.storeUrl ? await ClusterNode.join(config, store, config.storeUrl, member, log, options.onFatal ?? ((error) => log.fatal({ err: error }, "cluster: this process must stop"))) : void 0;
  const byName = new Map(channels.map((channel) => [channel.name, channel]));
  const running = new Supervisor({
    config,
    store,
    channels: byName,
    agents,
    model,
    tools,
    rules,
    memory,
    log,
    commandsDir: join7(promptsDir, "commands"),
    onUsage: (sample2) => {
      store.owner.recordUsage(sample2).catch((error) => log.warn({ err: error }, "could not record a model call's usage"));
      options.onUsage?.(sample2);
    },
    observer: options.metrics,
    runTask: cluster?.runTask,
    shared: cluster !== void 0,
    workerInstructions: mcp && (() => mcp.instructions())
  });
  const known = (await store.conversations()).map((conversation) => conversation.id);
  const startChannel = (channel, onMessage, tidy = true) => {
    const ours = (id) => channelOf(id) === channel.name;
    const owners = [...config.allowedUsers.users].filter(ours);
    return channel.start({ onMessage, commands: running.gate.commands(), conversations: known.filter(ours), owners, state: store.channelState(channel.name), tidy });
  };
  if (cluster) {
    const shared = channels.filter((channel) => !channel.exclusive);
    for (const channel of shared) await startChannel(channel, (message) => cluster.take(message), false);
    await cluster.start(running, {
      beforeLeading: async () => {
        for (const channel of shared) await channel.tidy?.();
      },
      onLeader: async () => {
        for (const channel of channels) if (channel.exclusive) await startChannel(channel, (message) => running.gate.take(message));
      }
    });
  } else {
    await running.start();
    for (const channel of channels) await startChannel(channel, (message) => running.gate.take(message));
  }
  const hooks = config.hooks.token ? new HooksServer(config.hooks.token, (name) => cluster ? cluster.raise(name) : running.scheduler.raise(name), log) : void 0;
  const wantedHooksPort = options.hooksPort ?? config.hooks.port;
  const hooksHost = options.hooksHost ?? config.hooks.host;
  const hooksPort = await hooks?.start(wantedHooksPort, hooksHost).catch((error) => {
    throw portError("HOOKS_PORT", wantedHooksPort, error, hooksHost);
  });
  return {
    supervisor: running,
    store,
    hooksPort,
    mcp,
    cluster,
    runsHere: (channel) => !cluster || !channel.exclusive || cluster.leads,
    async stopInput() {
      for (const channel of channels) await channel.stop();
      await hooks?.stop();
      await running.scheduler.stop();
      cluster?.stopClaiming();
    },
    async idle() {
      await Promise.all([running.idle(), cluster?.idle()]);
    },
    async stop() {
      await hooks?.stop();
      for (const channel of channels) await channel.stop();
      await cluster?.stopWork();
      await running.stop();
      await cluster?.stop();
      stopHealthFile?.();
      await mcp?.stop();
      await store.close();
    }
  };
}
function readPermissions(path11) {
  try {
    return parseConfig(JSON.parse(readFileSync5(path11, "utf8")));
  } catch (error) {
    const reason = error instanceof ZodError2 ? error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ") : error instanceof Error ? error.message : String(error);
    throw new ConfigError("PERMISSIONS_FILE", `PERMISSIONS_FILE: expected a JSON file of rules per role ({"worker": [{"permission", "pattern", "action"}]}): ${reason}`);
  }
}
function modelFor(config, metrics) {
  const cache2 = /* @__PURE__ */ new Map();
  return (agent) => {
    let model = cache2.get(agent.name);
    if (!model) {
      model = resolveModel(agent.model ? specOf(agent) : config.models[agent.role === "compaction" ? "teller" : agent.role], config);
      if (metrics) model = countedModel(model, agent.role, metrics);
      cache2.set(agent.name, model);
    }
    return model;
  };
}
function specOf(agent) {
  const at2 = agent.model.indexOf(":");
  const provider = agent.model.slice(0, at2);
  const variable = `prompts/workers/${agent.name}.md`;
  if (!PROVIDERS.includes(provider)) throw new ConfigError(variable, `${variable}: model provider "${provider}" is not one of ${PROVIDERS.join(", ")}`);
  return { provider, id: agent.model.slice(at2 + 1), variable };
}

// bench/soak.ts
init_config();

// bench/core.ts
import pino from "pino";
init_config();

// bench/figures.ts
var Figures = class {
  constructor(json) {
    this.json = json;
  }
  json;
  add(name, value, unit, target) {
    const rounded = Number(value.toFixed(value < 10 ? 3 : 1));
    if (this.json) process.stdout.write(`${JSON.stringify({ name, value: rounded, unit, target: target ?? null })}
`);
    else {
      const verdict = target === void 0 ? "" : `target ${target} ${meets(value, target) ? "ok" : "MISSED"}`;
      process.stdout.write(`${name.padEnd(44)} ${String(rounded).padStart(10)} ${unit.padEnd(8)} ${verdict}
`);
    }
  }
};
function meets(value, target) {
  const [op, limit] = target.split(" ");
  return op === "<=" ? value <= Number(limit) : value >= Number(limit);
}

// bench/no-memory.ts
import { tmpdir } from "node:os";
import { join as join8 } from "node:path";
var noMemory = {
  remember: async () => ({ path: "" }),
  search: async () => [],
  recordCompaction: async () => {
  },
  folder: () => join8(tmpdir(), "steward-bench-no-memory")
};

// bench/core.ts
var BENCH_OWNER = "console:local";
var BenchChannel = class {
  name = "bench";
  onMessage;
  waiting = /* @__PURE__ */ new Map();
  sent = 0;
  async start({ onMessage }) {
    this.onMessage = onMessage;
  }
  async send(conversation, { text }) {
    if (text.startsWith("final")) {
      const wake = this.waiting.get(conversation);
      this.waiting.delete(conversation);
      wake?.();
    }
    return { messageId: String(++this.sent) };
  }
  async edit() {
  }
  async stop() {
  }
  /** Sends a message and resolves when its final reply was handed to the channel. */
  turn(conversation, text) {
    const done = new Promise((resolve3) => this.waiting.set(conversation, resolve3));
    return this.onMessage({ conversation, user: BENCH_OWNER, text }).then(() => done);
  }
};
function result(content) {
  return {
    content,
    finishReason: { unified: content.some((c) => c.type === "tool-call") ? "tool-calls" : "stop", raw: void 0 },
    usage: { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } },
    warnings: []
  };
}
var calls = 0;
var call = (name, input) => ({ type: "tool-call", toolCallId: `c${++calls}`, toolName: name, input: JSON.stringify(input) });
function instantModel() {
  return {
    specificationVersion: "v3",
    provider: "bench",
    modelId: "instant",
    supportedUrls: {},
    doStream: () => Promise.reject(new Error("the instant model does not stream")),
    doGenerate: async (options) => {
      const system = options.prompt.find((m) => m.role === "system")?.content ?? "";
      const last = options.prompt.at(-1);
      const lastText = last.role === "user" ? last.content.map((p) => p.type === "text" ? p.text : "").join("") : "";
      if (last.role === "tool" || !options.tools?.length) return result([{ type: "text", text: system.includes("# Role: planner") ? "dispatched" : "" }]);
      if (system.includes("# Role: teller")) {
        if (lastText.startsWith("<task-results>")) return result([call("reply", { text: "final: results" })]);
        if (lastText.startsWith("delegate")) return result([call("delegate", { prompt: lastText })]);
        return result([call("reply", { text: `final: ${lastText}` })]);
      }
      if (system.includes("# Role: planner")) return result([call("delegate", { prompt: "work" })]);
      return result([{ type: "text", text: "worked" }]);
    }
  };
}

// bench/soak.ts
var TURNS = Number(process.env.SOAK_TURNS ?? 1e5);
var TURNS_PER_CONVERSATION = 20;
var LANES = 25;
function settledRss() {
  ;
  globalThis.gc?.();
  return process.memoryUsage().rss;
}
async function runSoakBench(figures) {
  const dataDir = mkdtempSync(join9(tmpdir2(), "steward-soak-"));
  const config = loadConfig({ DATA_DIR: dataDir, MODEL: "openai-compatible:instant", OPENAI_COMPATIBLE_BASE_URL: "http://127.0.0.1:9/v1", ALLOWED_USERS: BENCH_OWNER });
  const channel = new BenchChannel();
  const model = instantModel();
  const app = await startApp(config, pino2({ level: process.env.BENCH_LOG ?? "silent" }, pino2.destination(2)), [channel], noMemory, () => model);
  const stalls = monitorEventLoopDelay({ resolution: 10 });
  const tenth = Math.max(1, Math.floor(TURNS / 10));
  const conversations2 = Math.ceil(TURNS / TURNS_PER_CONVERSATION);
  let done = 0;
  let next = 0;
  let rssAfterTenth = 0;
  const marks = [];
  const started = performance.now();
  try {
    stalls.enable();
    await Promise.all(
      Array.from({ length: LANES }, async () => {
        for (let c = next++; c < conversations2; c = next++) {
          for (let turn = 0; turn < TURNS_PER_CONVERSATION && done < TURNS; turn++) {
            await channel.turn(`bench:soak${c}`, `hello ${turn}`);
            done++;
            if (done === tenth) {
              stalls.disable();
              rssAfterTenth = settledRss();
              stalls.enable();
            }
            if (done === tenth || done === TURNS - tenth || done === TURNS) marks.push(performance.now());
          }
        }
      })
    );
    await app.supervisor.idle();
    stalls.disable();
    const rssGrowth = (settledRss() - rssAfterTenth) / 2 ** 20;
    const [firstTenthEnd, lastTenthStart, end] = marks;
    const firstRate = tenth / ((firstTenthEnd - started) / 1e3);
    const lastRate = tenth / ((end - lastTenthStart) / 1e3);
    figures.add("soak_turns", TURNS, "turns");
    figures.add("soak_seconds", (performance.now() - started) / 1e3, "s");
    figures.add("soak_rss_growth_mb", rssGrowth, "MB", "<= 50");
    figures.add("soak_throughput_ratio", lastRate / firstRate, "ratio", ">= 0.9");
    figures.add("soak_event_loop_max_ms", stalls.max / 1e6, "ms", "<= 100");
  } finally {
    stalls.disable();
    await app.stop();
    rmSync2(dataDir, { recursive: true, force: true });
  }
}
if (import.meta.url === `file://${process.argv[1]}`) {
  await runSoakBench(new Figures(process.argv.includes("--json")));
  process.exit(0);
}
export {
  runSoakBench
};
