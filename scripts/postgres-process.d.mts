/** Types of postgres-process.mjs, for the TypeScript tests and benchmarks that start Postgres. */
export interface RunningPostgres {
  /** postgres://user:password@127.0.0.1:<port>/steward */
  url: string
  /** Stops the server and waits for its process to end. */
  stop(): Promise<void>
}
export function spawnPostgres(options: { dir: string; temporary?: boolean }): Promise<RunningPostgres>
