/** Types of postgres.mjs, for the TypeScript tests that start it. */
export interface RunningPostgres {
  /** postgres://user:password@127.0.0.1:<port>/steward */
  url: string
  stop(): Promise<void>
}
export function freePort(): Promise<number>
export function startPostgres(options: { dir: string; port?: number; temporary?: boolean; log?: (message: unknown) => void }): Promise<RunningPostgres>
