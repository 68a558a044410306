import { createHash, randomBytes } from "node:crypto"
import { hostname } from "node:os"

/** A process's id in the cluster: its host, its pid and a random part (pids are reused). */
export const newMemberId = (): string => `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`

/**
 * The application_name every store connection of process `id` carries (Postgres keeps 63 bytes
 * of a name, so a digest of the id, not the id). A process killed with a write under way on one
 * of them is not dead yet: Postgres finishes and commits that statement before it drops the
 * connection, so until then the write may still land (ClusterLink.connected waits for it).
 */
export const connectionTag = (id: string): string => `steward ${createHash("sha256").update(id).digest("hex").slice(0, 24)}`

