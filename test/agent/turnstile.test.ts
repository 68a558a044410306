import { describe, expect, it } from "vitest"
import { nextTurn } from "../../src/agent/turnstile.ts"

describe("nextTurn", () => {
  it("lets callers that are ready together go on one per turn of the event loop, in order", async () => {
    // A chain of immediates counts the loop's turns: one step per turn, as a timer or a socket
    // waiting to be served would get.
    let turns = 0
    let counting = true
    const count = () => {
      turns++
      if (counting) setImmediate(count)
    }
    setImmediate(count)
    const seen: Array<[string, number]> = []
    await Promise.all(["a", "b", "c", "d"].map((name) => nextTurn().then(() => seen.push([name, turns]))))
    counting = false
    expect(seen.map(([name]) => name)).toEqual(["a", "b", "c", "d"])
    const at = seen.map(([, turn]) => turn)
    for (let i = 1; i < at.length; i++) expect(at[i]).toBeGreaterThan(at[i - 1]!)
  })

  it("serves a caller that comes after the others have gone", async () => {
    await nextTurn()
    await expect(nextTurn()).resolves.toBeUndefined()
  })
})
