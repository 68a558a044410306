import { randomInt } from "node:crypto"
import type { Logger } from "pino"
import type { InboundMessage } from "../core/types.ts"
import type { Config } from "../config/config.ts"
import type { PairingRecord } from "../store/records.ts"
import type { Store } from "../store/store.ts"
import type { Outbox } from "../channel/outbox.ts"

/** No 0/O or 1/I: the code is read off a phone and typed into a terminal. */
const ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
export const CODE_LENGTH = 8
export const PAIRING_TTL_MS = 60 * 60_000

/**
 * Who may talk to Steward: the owners in ALLOWED_USERS, and users an owner approved by their
 * pairing code. A stranger's message reaches no model and leaves nothing of its content in the
 * store; the stranger is given a pairing code once per hour at most.
 */
export class Access {
  private approved = new Set<string>()
  private pairings = new Map<string, PairingRecord>()

  constructor(
    private readonly allowedUsers: Config["allowedUsers"],
    private readonly store: Store,
    private readonly outbox: Outbox,
    private readonly log: Logger,
  ) {}

  async load(): Promise<void> {
    for (const pairing of await this.store.users.pairings()) this.pairings.set(pairing.code, pairing)
  }

  /** Owners: the users named in ALLOWED_USERS. They alone may run admin commands. */
  isOwner(user: string): boolean {
    return this.allowedUsers.users.has(user)
  }

  async allows(user: string): Promise<boolean> {
    if (this.allowedUsers.anyone || this.isOwner(user) || this.approved.has(user)) return true
    // Approvals made by the CLI are written by another process: ask the store.
    if (!(await this.store.users.allowed(user))) return false
    this.approved.add(user)
    return true
  }

  /** Answers a stranger: a fresh pairing code unless they already hold a valid one. */
  async stranger(message: InboundMessage): Promise<void> {
    this.log.warn({ user: message.user, conversation: message.conversation }, "message from a user who is not allowed")
    const now = Date.now()
    const current = [...this.pairings.values()].find((p) => p.user === message.user && Date.parse(p.expiresAt) > now)
    if (current) return
    const expired = [...this.pairings.values()].filter((p) => Date.parse(p.expiresAt) <= now).map((p) => p.code)
    const pairing: PairingRecord = { code: newCode(), user: message.user, conversation: message.conversation, expiresAt: new Date(now + PAIRING_TTL_MS).toISOString() }
    // The user id lets an owner who prefers it add them to ALLOWED_USERS instead.
    const text = `Hi! I only talk to people my owner has approved. You are ${message.user} to me. To be approved, give my owner this code (valid for 1 hour): ${pairing.code}`
    // Nothing the stranger wrote is kept: not in history, not in the outbox.
    const reply = this.outbox.prepare(message.conversation, text, `pairing:${pairing.code}`)
    await this.store.save({ pairings: [pairing], pairingsDone: expired, outbox: [reply] })
    for (const code of expired) this.pairings.delete(code)
    this.pairings.set(pairing.code, pairing)
    this.outbox.commit(reply)
  }

  /** Approves the holder of a valid code; returns the user, or why not. */
  async approve(code: string): Promise<{ user: string } | { error: string }> {
    const pairing = await approvePairing(this.store, code)
    if ("error" in pairing) return pairing
    this.pairings.delete(pairing.code)
    this.approved.add(pairing.user)
    const welcome = this.outbox.prepare(pairing.conversation, "You have been approved — hello! What can I do for you?", `paired:${pairing.code}`)
    await this.store.save({ outbox: [welcome] })
    this.outbox.commit(welcome)
    return { user: pairing.user }
  }

  /** Takes back an approval made by pairing code, at once: the user is a stranger again. */
  async revoke(user: string): Promise<{ done: string } | { error: string }> {
    if (this.isOwner(user)) return { error: `${user} is an owner in ALLOWED_USERS; remove them there and restart Steward` }
    if (!this.approved.has(user) && !(await this.store.users.allowed(user))) return { error: `${user} is not an approved user` }
    await this.store.users.revoke(user)
    this.approved.delete(user)
    return { done: this.allowedUsers.anyone ? `revoked ${user} (ALLOWED_USERS is * : everyone may still talk to Steward)` : `revoked ${user}` }
  }

  pending(): PairingRecord[] {
    return [...this.pairings.values()].filter((p) => Date.parse(p.expiresAt) > Date.now())
  }
}

/**
 * Turns a valid code into a persisted approval (one write: the user is allowed, the code is
 * used up). Shared by the running server and the CLI, which has no outbox.
 */
export async function approvePairing(store: Store, code: string): Promise<PairingRecord | { error: string }> {
  const wanted = code.trim().toUpperCase()
  const pairing = await store.users.pairing(wanted)
  if (!pairing) return { error: `no pairing code ${wanted}` }
  if (Date.parse(pairing.expiresAt) <= Date.now()) return { error: `pairing code ${wanted} has expired; ask them to message Steward again for a new one` }
  await store.save({ allowed: [pairing.user], pairingsDone: [pairing.code] })
  return pairing
}

function newCode(): string {
  return Array.from({ length: CODE_LENGTH }, () => ALPHABET[randomInt(ALPHABET.length)]).join("")
}
