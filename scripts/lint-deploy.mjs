#!/usr/bin/env node
// `npm run lint:deploy` (and .ci/run): the deployment files checked. The Dockerfile with
// dockerfile-utils (from npm, so every machine has it: hadolint is a binary no registry we reach
// ships), where any diagnostic — warning or error — fails; the systemd unit with
// `systemd-analyze verify` where the machine has systemd.
import { spawnSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { pathToFileURL } from "node:url"
import dockerfileUtils from "dockerfile-utils"

const DOCKERFILE = "deploy/Dockerfile"
const UNIT = "deploy/steward.service"

/** Every diagnostic of dockerfile-utils for `content`, one line each (`file:line: severity message`). */
export function dockerfileProblems(content, file = DOCKERFILE) {
  const severity = { 1: "error", 2: "warning", 3: "information", 4: "hint" }
  return dockerfileUtils.validate(content).map((d) => `${file}:${d.range.start.line + 1}: ${severity[d.severity] ?? "problem"}: ${d.message}`)
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  let failed = false
  const problems = dockerfileProblems(readFileSync(DOCKERFILE, "utf8"))
  for (const problem of problems) console.error(problem)
  failed ||= problems.length > 0
  const verify = spawnSync("systemd-analyze", ["verify", UNIT], { stdio: "inherit" })
  if (verify.error) console.error(`systemd-analyze is not installed: ${UNIT} was not verified`)
  else failed ||= verify.status !== 0
  console.log(failed ? "deployment files: problems found" : `deployment files: ${DOCKERFILE} and ${UNIT} checked`)
  process.exit(failed ? 1 : 0)
}
