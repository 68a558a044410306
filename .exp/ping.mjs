import { Worker } from "node:worker_threads"
const w = new Worker(`const { parentPort } = require("node:worker_threads"); parentPort.on("message", (m) => parentPort.postMessage(m))`, { eval: true })
const ts = []
for (let i = 0; i < 2000; i++) {
  const s = performance.now()
  await new Promise((r) => { w.once("message", r); w.postMessage({ id: i, query: "hello world foo", exclude: [] }) })
  ts.push(performance.now() - s)
}
ts.sort((a, b) => a - b)
console.log("rtt p50", ts[1000].toFixed(3), "p99", ts[1980].toFixed(3))
await w.terminate()
