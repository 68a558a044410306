/** Types of free-port.mjs, for the TypeScript tests that use it. */
export function freePort(): Promise<number>
