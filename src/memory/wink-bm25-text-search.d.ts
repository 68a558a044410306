/** The part of wink-bm25-text-search (CommonJS, untyped) that Steward uses. */
declare module "wink-bm25-text-search" {
  namespace bm25 {
    interface Config {
      fldWeights: Record<string, number>
      bm25Params?: { k1?: number; b?: number; k?: number }
    }
    interface Engine {
      /** Before definePrepTasks and before the first addDoc. */
      defineConfig(config: Config): boolean
      /** There are no default tasks; without a field, the tasks prepare every field and the search text. */
      definePrepTasks(tasks: Array<(input: any) => any>, field?: string): number
      addDoc(doc: Record<string, unknown>, id: string | number): number
      /** Throws with fewer than 3 documents; the engine is immutable afterwards. */
      consolidate(precision?: number): boolean
      /** [id, score] pairs, best first. */
      search(text: string, limit?: number): Array<[string, number]>
      /** After consolidate(): per document, token index → BM25 weight of the token in it. */
      getDocs(): Record<string | number, { freq: Record<number, number>; length: number }>
      /** Token → token index. */
      getTokens(): Record<string, number>
      getTotalCorpusLength(): number
    }
  }
  function bm25(): bm25.Engine
  export = bm25
}
