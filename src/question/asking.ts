import { AWAIT_ANSWER, type Caller, type QuestionCapability } from "../tool/capabilities.ts"
import { TAINTED } from "../trust/taint.ts"
import type { Answer, Question, Questions } from "./questions.ts"

/** Questions as tools and the agent loop ask them: ask_user stops the run until the answer
 *  comes; a permission rule "ask" waits in the run for Allow or Deny (default Deny). */
export class Asking implements QuestionCapability {
  constructor(private readonly questions: Questions) {}

  async ask(caller: Caller, question: Question): Promise<Answer | typeof AWAIT_ANSWER> {
    return (await this.questions.ask({ conversation: caller.conversation, user: caller.user, origin: `${caller.sessionId}:${caller.callId}` }, question, "ask_user")) ?? AWAIT_ANSWER
  }

  async approve(caller: Caller, tool: string, pattern: string): Promise<boolean> {
    const who = caller.role === "teller" ? "I" : `A ${caller.agent} task`
    // A call asked about because the run read untrusted content says so: the user decides whether what was read may steer it.
    const afterUntrusted = tool.startsWith(TAINTED)
    const what = afterUntrusted ? `${tool.slice(TAINTED.length)} on “${pattern}” after reading content from outside (a web page, a file, a tool's or a task's answer)` : `${tool} on “${pattern}”`
    const question = { question: `${who} would like to use ${what}. Allow it?`, options: ["Allow", "Deny"], default: "Deny", timeout: 600 }
    const { answer } = await this.questions.waitFor({ conversation: caller.conversation, user: caller.user, origin: `${caller.sessionId}:${caller.callId}:permission` }, question, caller.abort)
    return answer === "Allow"
  }

  inquire(caller: Caller, key: string, question: Question): Promise<Answer> {
    return this.questions.waitFor({ conversation: caller.conversation, user: caller.user, origin: `${caller.sessionId}:${caller.callId}:${key}` }, question, caller.abort)
  }
}
