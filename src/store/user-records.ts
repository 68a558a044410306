import { allowed, pairings, profiles, remove, type AllowedRecord, type ProfileRecord } from "./collections.ts"
import { BackendReads } from "./reads.ts"
import type { PairingRecord } from "./records.ts"

/**
 * What Steward keeps about the users who are not its owners: the pairing codes handed out,
 * the users approved by one (src/access), and each user's profile (src/user/profiles.ts).
 * A pairing, its approval and a profile are written through `Store.save`.
 */
export class UserRecords extends BackendReads {
  pairings(): Promise<PairingRecord[]> {
    return this.readAll(pairings)
  }
  pairing(code: string): Promise<PairingRecord | undefined> {
    return this.get(pairings, code)
  }
  async allowed(user: string): Promise<boolean> {
    return (await this.get(allowed, user)) !== undefined
  }
  /** The users approved by pairing code (not the owners of ALLOWED_USERS). */
  allowedUsers(): Promise<AllowedRecord[]> {
    return this.readAll(allowed)
  }
  revoke(user: string): Promise<void> {
    return this.backend.write([remove(allowed, user)])
  }
  /** Every user profile (time zones), read once at start-up. */
  profiles(): Promise<ProfileRecord[]> {
    return this.readAll(profiles)
  }
}
