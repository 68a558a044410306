import type { Command } from "commander"
import { approvePairing } from "../access/access.ts"
import { channelOf } from "../channel/channel.ts"
import { CliError, print, setting, table, when, withStore } from "./common.ts"
import { requestControl } from "./control.ts"

const USER = /^[a-z][a-z0-9-]*:\S+$/

export function registerUsers(program: Command): void {
  const users = program
    .command("users")
    .description("who may talk to Steward: the owners of ALLOWED_USERS and the users approved by pairing code")
    .action(async (_options: unknown, command: Command) => {
      const owners = setting("ALLOWED_USERS")
      const approved = await withStore((store) => store.users.allowedUsers())
      const rows = [...[...owners.users].map((user) => ({ user, kind: "owner", since: undefined as string | undefined })), ...approved.map((record) => ({ user: record.user, kind: "approved", since: record.at }))]
      print(command, { anyone: owners.anyone, users: rows }, () =>
        (owners.anyone ? "ALLOWED_USERS is *: anyone may talk to Steward\n" : "") + (rows.length === 0 ? "no users\n" : table(["user", "kind", "since"], rows.map((row) => [row.user, row.kind, when(row.since)]))),
      )
    })
  users
    .command("revoke <user>")
    .description("take back a pairing approval (<user>: channel:id, e.g. telegram:1001); the running Steward stops answering them at once")
    .action(async (user: string, _options: unknown, command: Command) => {
      if (!USER.test(user)) throw new CliError(`"${user}" is not a user: write it as <channel>:<id>, e.g. telegram:1001`, 2)
      if (setting("ALLOWED_USERS").users.has(user)) throw new CliError(`${user} is an owner in ALLOWED_USERS; remove them there and restart Steward`)
      const result = await withStore(async (store) => {
        if (!(await store.users.allowed(user))) throw new CliError(`${user} is not an approved user (${channelOf(user)} users approved by pairing code are listed by \`steward users\`)`)
        return requestControl(store, "user.revoke", user)
      })
      print(command, { user, result }, () => `${result}\n`)
    })

  const pairing = program.command("pairing").description("pairing codes strangers were given")
  pairing
    .command("list")
    .description("show pairing codes waiting for approval")
    .action(async (_options: unknown, command: Command) => {
      const pending = (await withStore((store) => store.users.pairings())).filter((p) => Date.parse(p.expiresAt) > Date.now())
      print(command, pending, () => (pending.length === 0 ? "no pairing requests\n" : table(["code", "user", "until"], pending.map((p) => [p.code, p.user, when(p.expiresAt)]))))
    })
  pairing
    .command("approve <code>")
    .description("let the user who was given <code> talk to Steward")
    .action(async (code: string, _options: unknown, command: Command) => {
      const result = await withStore((store) => approvePairing(store, code))
      if ("error" in result) throw new CliError(result.error)
      print(command, { user: result.user }, () => `approved ${result.user}\n`)
    })
  pairing
    .command("deny <code>")
    .description("drop a pairing request; the stranger stays unapproved")
    .action(async (code: string, _options: unknown, command: Command) => {
      const wanted = code.trim().toUpperCase()
      const user = await withStore(async (store) => {
        const found = await store.users.pairing(wanted)
        if (!found) throw new CliError(`no pairing code ${wanted}`)
        await store.save({ pairingsDone: [wanted] })
        return found.user
      })
      print(command, { code: wanted, user }, () => `denied ${user} (code ${wanted})\n`)
    })
}
