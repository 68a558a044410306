/** Types of lint-deploy.mjs, for its test. */
export function dockerfileProblems(content: string, file?: string): string[]
