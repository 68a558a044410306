import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SqliteBackend } from "../../src/store/sqlite.ts"
import { backendContract } from "./contract.ts"

backendContract("SQLite", () => {
  const dir = mkdtempSync(join(tmpdir(), "steward-backend-"))
  return {
    open: (schema) => SqliteBackend.open(dir, schema),
    reopen: (schema) => SqliteBackend.open(dir, schema),
    dispose: async () => rmSync(dir, { recursive: true, force: true }),
  }
})
