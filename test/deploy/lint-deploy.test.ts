import { readFileSync } from "node:fs"
import { expect, it } from "vitest"
import { dockerfileProblems } from "../../scripts/lint-deploy.mjs"

it("finds nothing to say about the shipped Dockerfile", () => {
  expect(dockerfileProblems(readFileSync("deploy/Dockerfile", "utf8"))).toEqual([])
})

it("names the line and the problem of a broken Dockerfile, warnings included", () => {
  const problems = dockerfileProblems("FROM node:22\nRUNN echo hi\nEXPOSE abc\nMAINTAINER someone\n", "Dockerfile")
  expect(problems).toEqual([
    expect.stringMatching(/^Dockerfile:2: error: Unknown instruction: RUNN/),
    expect.stringMatching(/^Dockerfile:3: error: .*abc/),
    expect.stringMatching(/^Dockerfile:4: warning: .*MAINTAINER.*deprecated/i),
  ])
})
