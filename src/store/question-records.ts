import { questions } from "./collections.ts"
import { BackendReads } from "./reads.ts"
import type { QuestionRecord } from "./records.ts"

/**
 * The questions an agent asked a user (src/question), written through `Store.save` with the
 * outbox record that asks them.
 */
export class QuestionRecords extends BackendReads {
  /** Every question (tests); the Questions load the open ones. */
  all(): Promise<QuestionRecord[]> {
    return this.readAll(questions)
  }
  open(): Promise<QuestionRecord[]> {
    return this.index(questions, { index: "open", group: "" })
  }
  byOrigin(origin: string): Promise<QuestionRecord | undefined> {
    return this.first(questions, "origin", origin)
  }
}
