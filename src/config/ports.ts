import type { AddressInfo, Server } from "node:net"
import { ConfigError } from "./config.ts"

/**
 * A server that could not listen, told as the variable that chose its port ("SLACK_PORT 3000
 * is in use") or its address (`ADMIN_HOST` for `ADMIN_PORT`, when `host` was given) so start-up
 * ends with one line and exit code 2; any other error is returned as is.
 */
export function portError(variable: string, port: number, error: unknown, host?: string): unknown {
  const hostVariable = variable.replace(/_PORT$/, "_HOST")
  switch ((error as NodeJS.ErrnoException | undefined)?.code) {
    case "EADDRNOTAVAIL":
    case "EAFNOSUPPORT":
      return new ConfigError(hostVariable, `${hostVariable} ${host ?? ""} is not an address of this machine; use 127.0.0.1, 0.0.0.0 (every interface) or one of its own addresses`)
    case "ENOTFOUND":
      return new ConfigError(hostVariable, `${hostVariable} ${host ?? ""} is not a known host name; use 127.0.0.1, 0.0.0.0 (every interface) or one of this machine's addresses`)
    case "EADDRINUSE":
      return new ConfigError(variable, `${variable} ${port} is in use`)
    case "EACCES":
      return new ConfigError(variable, `${variable} ${port} may not be used by this user (ports below 1024 need privileges)`)
    default:
      return error
  }
}

/** Starts `server` listening; resolves with the port it got (`port` may be 0 for any free one).
 *  Failing to listen rejects with portError's naming of `variable`. */
export function listen(server: Server, variable: string, port: number, host?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const failed = (error: Error) => reject(portError(variable, port, error, host))
    server.once("error", failed)
    server.listen(port, host, () => {
      server.off("error", failed)
      resolve((server.address() as AddressInfo).port)
    })
  })
}
