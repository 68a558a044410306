import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/build.ts", "test/support/postgres.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // End-to-end tests start child processes; two cores, so keep the pool small.
    maxWorkers: 2,
  },
})
