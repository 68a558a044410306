/** Types of runtime-files.mjs, for its test. */
export function missingRuntimeFiles(distDir: string): string[]
