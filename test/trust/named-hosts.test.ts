import { describe, expect, it } from "vitest"
import type { HistoryMessage } from "../../src/core/types.ts"
import { fetchNeedsUser } from "../../src/trust/named-hosts.ts"

const said = (...texts: Array<[HistoryMessage["role"], string]>) => ({
  conversation: "test:c1",
  history: { recent: async () => texts.map(([role, text]) => ({ role, text, createdAt: "" })), between: async () => [] },
})

describe("fetch_url in a tainted run: which fetches need the user", () => {
  it("none to a host a user named, without a query", async () => {
    const ctx = said(["user", "Summarise https://www.Example.com/news and docs.python.org."])
    expect(await fetchNeedsUser("https://example.com/other/page", ctx)).toBe(false)
    expect(await fetchNeedsUser("https://docs.python.org/3/", ctx)).toBe(false)
  })

  it("one to a host only a page or the model named, to a look-alike, or with a query or credentials", async () => {
    const ctx = said(["user", "read example.com please"], ["assistant", "I will also check evil.example"])
    for (const url of ["https://evil.example/x", "https://badexample.com/", "https://example.com.evil.example/", "https://example.com/?d=secret", "https://u:p@example.com/", "not a url"]) {
      expect(await fetchNeedsUser(url, ctx), url).toBe(true)
    }
  })
})
