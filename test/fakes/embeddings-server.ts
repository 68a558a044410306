/**
 * A fake OpenAI-compatible embeddings endpoint (POST …/embeddings) on 127.0.0.1 for hybrid
 * memory search, driven through the real AI SDK providers.
 *
 * Its vectors are honest: a deterministic bag of concepts from a small hand-made thesaurus
 * (words that mean about the same thing share a concept, in English and German, as in a real
 * multilingual model), plus every other word hashed into its own dimensions at a lower weight.
 * Nothing in it knows the queries it will be asked; "tooth doctor" comes near "dentist" only
 * because tooth, doctor and dentist share concepts.
 *
 * The model name picks other embedders (FAKE_MODELS): "fake-ngram", meaning-free hashed
 * character trigrams, and "fake-random", random vectors, for what a poor model does to search.
 *
 * Tests can make it fail (HTTP 500) or hang until the client gives up, and read what it was asked.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { seededRandom } from "../support/random.ts"

export const FAKE_EMBEDDING_DIMS = 256
const CONCEPT_DIMS = 96
const OTHER_WORD_WEIGHT = 0.35

const THESAURUS: Record<string, string> = {
  dental: "dentist dentists dental tooth teeth zahn zahnarzt zahnarzttermin elbdental crown",
  doctor: "doctor doctors physician gp practice arzt ärztin kinderarzt kinderärztin pediatrician paediatrician clinic praxis dentist zahnarzt",
  child: "child children kid kids daughter son kinder kind kinderärztin kinderarzt baby babysitter pediatrician paediatrician",
  care: "babysitter babysitting mind minds minded look looks looked care childcare nanny",
  evening: "evening evenings night nights tonight abend abends",
  home: "home house flat apartment wohnung live lives living residence moved move",
  address: "address street straße strasse adresse",
  basement: "basement cellar keller",
  storage: "storage compartment abteil locker",
  vehicle: "car cars vehicle auto skoda octavia golf",
  plate: "plate registration licence license kennzeichen",
  money: "rent costs cost price pay paid pays euros fee bill payment",
  housing: "rent housing miete lease",
  month: "month monthly months monat monatlich",
  phone: "phone mobile cell telephone handy cellphone carrier carriers",
  bike: "bike bicycle fahrrad cycling",
  lock: "lock padlock schloss",
  network: "wifi internet router wlan network",
  password: "password passwort login credentials",
  salary: "salary wage wages paycheck gehalt",
  bank: "bank account deposit iban sparkasse ing",
  trash: "garbage trash rubbish waste bin tonne biotonne papiertonne müll geleert emptied",
}

const STOP_WORDS = new Set("a an the of for to in on at by and or is are was were be my our your his her its their we i you he she it who what where when which how do does did now each with from this that these those".split(" "))

const CONCEPTS = new Map<string, number[]>()
for (const [i, words] of Object.values(THESAURUS).entries()) for (const word of words.split(" ")) CONCEPTS.set(word, [...(CONCEPTS.get(word) ?? []), i])

function hash(word: string): number {
  let h = 2166136261
  for (const char of word) h = Math.imul(h ^ char.codePointAt(0)!, 16777619)
  return CONCEPT_DIMS + ((h >>> 0) % (FAKE_EMBEDDING_DIMS - CONCEPT_DIMS))
}

/** The fake model's vector for `text` (not normalised; the client normalises). */
export function fakeEmbedding(text: string): number[] {
  const vector = new Array<number>(FAKE_EMBEDDING_DIMS).fill(0)
  for (const match of text.toLowerCase().matchAll(/[\p{L}]+/gu)) {
    const word = match[0]
    if (STOP_WORDS.has(word)) continue
    const concepts = CONCEPTS.get(word) ?? CONCEPTS.get(word.replace(/(es|s)$/, ""))
    if (concepts) for (const concept of concepts) vector[concept]! += 1
    else vector[hash(word)]! += OTHER_WORD_WEIGHT
  }
  return vector
}

/**
 * A meaning-free model: hashed character trigrams of the lower-cased text, the stand-in for a
 * poor embedding model. Texts that share letters come near each other, whatever they mean.
 */
export function ngramEmbedding(text: string): number[] {
  const vector = new Array<number>(FAKE_EMBEDDING_DIMS).fill(0)
  const chars = Array.from(` ${text.toLowerCase().replace(/\s+/g, " ")} `)
  for (let i = 0; i + 3 <= chars.length; i++) {
    let h = 2166136261
    for (const char of chars.slice(i, i + 3)) h = Math.imul(h ^ char.codePointAt(0)!, 16777619)
    vector[(h >>> 0) % FAKE_EMBEDDING_DIMS]! += 1
  }
  return vector
}

/** A random-weight model: the same text always gets the same vector, which means nothing. */
export function randomEmbedding(text: string): number[] {
  let seed = 2166136261
  for (const char of text) seed = Math.imul(seed ^ char.codePointAt(0)!, 16777619)
  const random = seededRandom(seed)
  return Array.from({ length: FAKE_EMBEDDING_DIMS }, () => random() - 0.5)
}

/** Random vectors of another size: the shapes of common small models (384, 768). */
function randomOfSize(dims: number): (text: string) => number[] {
  return (text) => {
    const random = seededRandom(fnv(text))
    return Array.from({ length: dims }, () => random() - 0.5)
  }
}

const fnv = (text: string) => {
  let seed = 2166136261
  for (const char of text) seed = Math.imul(seed ^ char.codePointAt(0)!, 16777619)
  return seed >>> 0
}

/** The good model squeezed into 8 dimensions: it still leans the right way, barely. */
const tinyEmbedding = (text: string) => fakeEmbedding(text).reduce((tiny, value, i) => (tiny[i % 8]! += value, tiny), new Array<number>(8).fill(0))
/** Every text the same vector: no ranking at all. */
const constantEmbedding = () => new Array<number>(FAKE_EMBEDDING_DIMS).fill(1)
/** The good model's vector of another text: confidently wrong. */
const SHUFFLED_POOL = [...Object.values(THESAURUS), "groceries milk bread", "holiday train tickets", "garden party birthday", "tax documents office"]
const shuffledEmbedding = (text: string) => fakeEmbedding(SHUFFLED_POOL[fnv(text) % SHUFFLED_POOL.length]!)
/** Good on English, random on German and Chinese: informative on some kinds of query only. */
const GERMAN_OR_CHINESE = /[äöüßÄÖÜ]|\p{sc=Han}|\b(?:der|die|das|und|ist|von|mein|meine|wer|wann|wo|ich|wir|bei|für|mit|neue|jetzt)\b/iu
const englishOnlyEmbedding = (text: string) => (GERMAN_OR_CHINESE.test(text) ? randomEmbedding(text) : fakeEmbedding(text))

/**
 * The server's models by name: a good one (the default), a meaning-free one, a random one, and
 * the other ways a model can be poor: random of 384 and 768 dimensions, 8 dimensions, one
 * vector for everything, the vector of another text, good in English only.
 */
export const FAKE_MODELS: Record<string, (text: string) => number[]> = {
  "fake-ngram": ngramEmbedding,
  "fake-random": randomEmbedding,
  "fake-random-384": randomOfSize(384),
  "fake-random-768": randomOfSize(768),
  "fake-tiny": tinyEmbedding,
  "fake-constant": constantEmbedding,
  "fake-shuffled": shuffledEmbedding,
  "fake-english-only": englishOnlyEmbedding,
}

export interface EmbeddingsServer {
  /** Base URL for OPENAI_COMPATIBLE_BASE_URL / OPENAI_BASE_URL. */
  url: string
  /** Every request's inputs, in order. */
  requests: Array<{ model: string; input: string[] }>
  /** "ok", or "fail" (HTTP 500), or "hang" (never answers). */
  mode: "ok" | "fail" | "hang"
  /** Texts embedded so far. */
  readonly embedded: number
  /** Requests held open in "hang" mode. */
  readonly hanging: number
  close(): Promise<void>
}

export async function startEmbeddingsServer(): Promise<EmbeddingsServer> {
  const hanging = new Set<ServerResponse>()
  const state: EmbeddingsServer = {
    url: "",
    requests: [],
    mode: "ok",
    get embedded() {
      return state.requests.reduce((sum, request) => sum + request.input.length, 0)
    },
    get hanging() {
      return hanging.size
    },
    close: async () => {
      for (const response of hanging) response.destroy()
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      server.closeAllConnections()
      await closed
    },
  }
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    let body = ""
    request.on("data", (part: Buffer) => (body += part.toString("utf8")))
    request.on("end", () => {
      if (request.method !== "POST" || !request.url?.endsWith("/embeddings")) return send(response, 404, { error: { message: `no route ${request.url}` } })
      let parsed: { model: string; input: string | string[] }
      try {
        parsed = JSON.parse(body)
      } catch {
        return send(response, 400, { error: { message: "invalid JSON" } })
      }
      if (state.mode === "hang") {
        hanging.add(response)
        response.on("close", () => hanging.delete(response))
        return
      }
      if (state.mode === "fail") return send(response, 500, { error: { message: "embedding backend down", type: "server_error" } })
      const input = Array.isArray(parsed.input) ? parsed.input : [parsed.input]
      state.requests.push({ model: parsed.model, input })
      send(response, 200, {
        object: "list",
        model: parsed.model,
        data: input.map((text, index) => ({ object: "embedding", index, embedding: (FAKE_MODELS[parsed.model] ?? fakeEmbedding)(text) })),
        usage: { prompt_tokens: input.length, total_tokens: input.length },
      })
    })
  })
  server.keepAliveTimeout = 1
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
  return state
}

function send(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/json", "retry-after-ms": "0" })
  response.end(JSON.stringify(body))
}
