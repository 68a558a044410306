/**
 * The Slack benchmark's load generator, in a worker thread of its own so that signing and
 * sending requests does not queue on the event loop it measures (Slack is another machine).
 * For each burst it is asked for, it posts `count` signed DMs from as many users at once and
 * answers with each acknowledgement's latency in ms.
 */
import { parentPort, workerData } from "node:worker_threads"
import { dmEvent, eventCallback, EventSender } from "../test/fakes/slack-api.ts"

export type LoadInput = { url: string; signingSecret: string; team: string }
export type Burst = { count: number; round: number }

const { url, signingSecret, team } = workerData as LoadInput
const sender = new EventSender(url, signingSecret)

parentPort!.on("message", async ({ count, round }: Burst) => {
  const bodies = Array.from({ length: count }, (_, i) => eventCallback(team, dmEvent(`U${i}`, `D${i}`, `hello ${round}`)))
  const deliveries = await Promise.all(bodies.map((body) => sender.event(body)))
  const failed = deliveries.filter((delivery) => delivery.status !== 200)
  parentPort!.postMessage(failed.length > 0 ? { error: `${failed.length} events were not acknowledged with 200 (first: ${failed[0].status})` } : { latencies: deliveries.map((delivery) => delivery.ms) })
})
