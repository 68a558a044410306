import { createHash, timingSafeEqual } from "node:crypto"

/** Whether `given` is the secret, compared in constant time: both are hashed first, so neither
 *  the content nor the length of the secret shows in how long a wrong guess takes. */
export function sameSecret(given: string, secret: string): boolean {
  const digest = (text: string) => createHash("sha256").update(text).digest()
  return timingSafeEqual(digest(given), digest(secret))
}
