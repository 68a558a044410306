import ipaddr from "ipaddr.js"
import { z } from "zod"

type Address = ipaddr.IPv4 | ipaddr.IPv6
type Cidr = [Address, number]

/**
 * IPv6 global unicast (RFC 4291 §2.4): ipaddr.js calls every address it has no special range for
 * "unicast", including the deprecated IPv4-compatible ::a.b.c.d and the local-use NAT64 prefix
 * 64:ff9b:1::/48; only 2000::/3 is routed on the Internet.
 */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR("2000::/3")
/** NAT64 (RFC 6052): the last 32 bits are the IPv4 address the gateway connects to. */
const NAT64_RANGE = "rfc6052"

/** Why fetch_url refuses a destination: a name or address that is not on the public Internet. */
export class BlockedDestination extends Error {
  override name = "BlockedDestination"
}

/**
 * The range an address lies in when it is not a public unicast address (loopback, private,
 * linkLocal, carrierGradeNat, uniqueLocal, multicast, unspecified, reserved…, as ipaddr.js names
 * them), or undefined when it is public. An IPv4 address inside IPv6 (mapped, NAT64) is judged by
 * the IPv4 address it leads to. Accepts every form ipaddr.js parses, legacy IPv4 ones included
 * (127.1, 2130706433, 0x7f000001, 0177.0.0.1), since the system resolver accepts them too.
 */
export function nonPublicRange(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return "not an IP address"
  return rangeOf(ipaddr.parse(address))
}

function rangeOf(address: Address): string | undefined {
  const embedded = embeddedIPv4(address)
  if (embedded) return rangeOf(embedded)
  const range = address.range()
  if (range !== "unicast") return range
  if (address.kind() === "ipv6" && !address.match(GLOBAL_UNICAST_V6)) return "not global unicast"
  return undefined
}

/** The IPv4 address an IPv6 one stands for: IPv4-mapped (::ffff:a.b.c.d) or NAT64 (64:ff9b::a.b.c.d). */
function embeddedIPv4(address: Address): ipaddr.IPv4 | undefined {
  if (address.kind() !== "ipv6") return undefined
  const v6 = address as ipaddr.IPv6
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address()
  if (v6.range() === NAT64_RANGE) return ipaddr.fromByteArray(v6.toByteArray().slice(12)) as ipaddr.IPv4
  return undefined
}

/** The same address in the form CIDRs are matched in: an IPv4-mapped IPv6 address as IPv4. */
function canonical(address: Address): Address {
  return address.kind() === "ipv6" && (address as ipaddr.IPv6).isIPv4MappedAddress() ? (address as ipaddr.IPv6).toIPv4Address() : address
}

/** `FETCH_ALLOW_HOSTS`: hostnames and CIDRs (or single addresses) the operator lets fetch_url reach. */
export interface AllowList {
  hosts: Set<string>
  cidrs: Cidr[]
}

export const NO_EXCEPTIONS: AllowList = { hosts: new Set(), cidrs: [] }

const ALLOW_HOSTS_EXPECTED = "expected a comma-separated list of hostnames and CIDRs, e.g. wiki.internal,10.1.2.0/24,127.0.0.1"

/** Parses FETCH_ALLOW_HOSTS; each entry is a hostname (matched exactly, any case), an address or a CIDR. */
export const allowHostsSchema = z.string().transform((value, ctx): AllowList => {
  const allow: AllowList = { hosts: new Set(), cidrs: [] }
  for (const raw of value.split(",").map((entry) => entry.trim()).filter((entry) => entry !== "")) {
    const entry = raw.replace(/^\[(.*)\]$/, "$1")
    if (ipaddr.isValidCIDR(entry)) allow.cidrs.push(canonicalCidr(ipaddr.parseCIDR(entry)))
    else if (ipaddr.isValid(entry)) {
      const address = canonical(ipaddr.parse(entry))
      allow.cidrs.push([address, address.kind() === "ipv4" ? 32 : 128])
    } else if (z.hostname().safeParse(entry).success && /[a-z]/i.test(entry)) allow.hosts.add(hostKey(entry))
    else {
      ctx.addIssue({ code: "custom", message: ALLOW_HOSTS_EXPECTED, params: { got: `entry ${JSON.stringify(raw)}` } })
      return z.NEVER
    }
  }
  return allow
})

function canonicalCidr([address, bits]: Cidr): Cidr {
  // ::ffff:10.0.0.0/104 is the IPv4 network 10.0.0.0/8.
  if (address.kind() === "ipv6" && (address as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) return [canonical(address), bits - 96]
  return [address, bits]
}

/** Hostnames compare without case and without the trailing dot of a fully qualified name. */
function hostKey(host: string): string {
  return host.toLowerCase().replace(/\.+$/, "")
}

/**
 * Which destinations a model-chosen URL may reach: public unicast addresses, plus what the
 * operator allowed. A name is refused when ANY address it resolves to is refused, so a name that
 * resolves to both a public and a private address cannot be used to reach the private one.
 */
export class AddressPolicy {
  constructor(private readonly allow: AllowList = NO_EXCEPTIONS) {}

  /** An allowed hostname skips the address checks (it is the operator's own, wherever it points). */
  hostAllowed(host: string): boolean {
    return this.allow.hosts.has(hostKey(bare(host)))
  }

  /** Refusal of a URL's host before any lookup: names that always mean this machine, and IP literals. */
  hostRefusal(host: string): string | undefined {
    const name = bare(host)
    if (this.hostAllowed(name)) return undefined
    const key = hostKey(name)
    // RFC 6761: localhost and everything under it is loopback, whatever a resolver says.
    if (key === "localhost" || key.endsWith(".localhost")) return `${name} is this machine, which fetch_url may not reach`
    if (ipaddr.isValid(name)) return this.addressRefusal(name, name)
    return undefined
  }

  /** Refusal of one resolved (or literal) address of `host`, or undefined when it may be reached. */
  addressRefusal(host: string, address: string): string | undefined {
    if (this.hostAllowed(host)) return undefined
    const range = nonPublicRange(address)
    if (range === undefined) return undefined
    if (range !== "not an IP address" && this.inAllowedCidr(ipaddr.parse(address))) return undefined
    return `${bare(host)} leads to ${address} (${range}), which fetch_url may not reach`
  }

  private inAllowedCidr(address: Address): boolean {
    const wanted = canonical(address)
    return this.allow.cidrs.some(([network, bits]) => network.kind() === wanted.kind() && wanted.match(network, bits))
  }
}

/** A URL's hostname without the brackets of an IPv6 literal. */
function bare(host: string): string {
  return host.replace(/^\[(.*)\]$/, "$1")
}
