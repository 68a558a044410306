import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { loadCommands, parseCommand } from "../../src/command/commands.ts"
import { MAX_PART_CHARS, markParts, resolveParts, runShell } from "../../src/command/template-parts.ts"
import { unwrapped } from "../../src/trust/envelope.ts"

// Seed 000 step 8: a command file's `[[path]]`, `[[worker]]` and !`command`.

function setup(template: string) {
  const root = mkdtempSync(join(tmpdir(), "steward-template-"))
  const workspace = join(root, "workspace")
  mkdirSync(join(root, "commands"), { recursive: true })
  mkdirSync(workspace, { recursive: true })
  writeFileSync(join(root, "commands", "go.md"), `---\ndescription: test\n---\n${template}`)
  const commands = loadCommands(join(root, "commands"), new Set(["teller", "planner", "research"]))
  const context = { workspace, workerTypes: new Set(["research"]) }
  const expand = async (text: string) => {
    const parsed = parseCommand(text, commands, context.workerTypes)
    if (parsed?.kind !== "file") throw new Error("not a file command")
    return resolveParts(parsed.prompt, parsed.command.parts, context)
  }
  return { root, workspace, expand }
}

describe("command templates", () => {
  it("inlines a workspace file for [[path]] and references a worker type for [[name]]", async () => {
    const { workspace, expand } = setup("Review [[notes/todo.md]] with [[research]] about $ARGUMENTS")
    mkdirSync(join(workspace, "notes"))
    writeFileSync(join(workspace, "notes", "todo.md"), "- buy milk\n")
    const prompt = await expand("/go prices")
    // The file's text is outside content: in an envelope, which taints the turn.
    expect(prompt).toMatch(/^Review <untrusted-content source="file notes\/todo.md" boundary="[0-9a-f]{16}">\n- buy milk\n\n<\/untrusted-content boundary="[0-9a-f]{16}"> with/)
    expect(unwrapped(prompt)).toBe('Review - buy milk\n with the research worker (delegate this to the worker type "research") about prices')
  })

  it("keeps [[path]] inside the workspace, cuts a large file, and shows a failure in the prompt", async () => {
    const { root, workspace, expand } = setup("[[../secret.txt]] [[missing.md]] [[link/x.txt]] [[big.txt]]")
    writeFileSync(join(root, "secret.txt"), "top secret")
    mkdirSync(join(root, "outside"))
    writeFileSync(join(root, "outside", "x.txt"), "outside")
    symlinkSync(join(root, "outside"), join(workspace, "link"))
    writeFileSync(join(workspace, "big.txt"), "y".repeat(MAX_PART_CHARS + 500))
    const prompt = await expand("/go")
    expect(prompt).not.toContain("top secret")
    expect(prompt).not.toContain("outside\n")
    expect(prompt).toContain("[[../secret.txt]: could not be read: ../secret.txt is outside the workspace]")
    expect(prompt).toContain("[[missing.md]: could not be read: no such file in the workspace, nor a worker type (research)]")
    expect(prompt).toContain("[[link/x.txt]: could not be read: link/x.txt leads outside the workspace through a symlink]")
    expect(prompt).toContain(`${"y".repeat(MAX_PART_CHARS)}\n[… cut at ${MAX_PART_CHARS} characters]`)
  })

  it("inlines a file as it is: its own !`command`, [[path]] or markers are not expanded; a folder, a pipe or an unknown worker is shown as unreadable", async () => {
    const { root, workspace, expand } = setup("A: [[inner.md]] B: [[sub]] C: [[pipe]] D: [[nobody]]")
    const flag = join(root, "ran")
    writeFileSync(join(workspace, "inner.md"), `!\`touch ${flag}\` [[other.md]] \u00000\u0000 $ARGUMENTS`)
    writeFileSync(join(workspace, "other.md"), "other's text")
    mkdirSync(join(workspace, "sub"))
    execFileSync("mkfifo", [join(workspace, "pipe")])
    const prompt = await expand("/go now")
    expect(prompt).toMatch(/A: <untrusted-content source="file inner.md" boundary="[0-9a-f]+">\n/)
    expect(prompt).toContain(`\n!\`touch ${flag}\` [[other.md]] \u00000\u0000 $ARGUMENTS\n</untrusted-content`)
    expect(prompt).not.toContain("other's text")
    expect(() => readFileSync(flag)).toThrow()
    expect(prompt).toContain("B: [[sub]: could not be read: not a file]")
    expect(prompt).toContain("C: [[pipe]: could not be read: not a file]")
    expect(prompt).toContain("D: [[nobody]: could not be read: no such file in the workspace, nor a worker type (research)]")
  })

  it("runs !`command` from the owner's file in the workspace, inlining its output; a failure is shown, not thrown", async () => {
    const { workspace, expand } = setup("Status: !`echo hello; pwd` and !`echo oops >&2; exit 3`")
    const prompt = await expand("/go")
    expect(unwrapped(prompt)).toBe(`Status: hello\n${workspace} and [!\`echo oops >&2; exit 3\` failed with exit code 3]\noops`)
    expect(prompt).toContain('<untrusted-content source="output of !`echo hello; pwd`" boundary=')
  })

  it("never runs a command or reads a file that comes from the arguments", async () => {
    const { root, expand } = setup("Do: $ARGUMENTS and $1")
    const flag = join(root, "ran")
    const prompt = await expand(`/go !\`touch ${flag}\` [[../secret]] ${"\u0000"}0${"\u0000"}`)
    expect(prompt).toContain(`!\`touch ${flag}\``)
    expect(prompt).toContain("[[../secret]]")
    expect(() => readFileSync(flag)).toThrow()
    expect(markParts("plain").parts).toEqual([])
  })

  it("stops a command and its children after the time limit, and caps its output", async () => {
    const { root } = setup("x")
    const started = Date.now()
    const pidFile = join(root, "child.pid")
    const out = await runShell(`sleep 30 & echo $! > ${pidFile}; echo started; wait`, root, 500)
    expect(out).toBe("[!`sleep 30 & echo $! > " + pidFile + "; echo started; wait` was stopped after 0.5 s]\nstarted")
    expect(Date.now() - started).toBeLessThan(5_000)
    const child = Number(readFileSync(pidFile, "utf8"))
    await expect.poll(() => alive(child), { timeout: 3_000 }).toBe(false)
    const big = await runShell(`head -c ${MAX_PART_CHARS * 2} /dev/zero | tr '\\0' 'z'`, root)
    expect(big).toBe(`${"z".repeat(MAX_PART_CHARS)}\n[… cut at ${MAX_PART_CHARS} characters]`)
  })
})

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}
