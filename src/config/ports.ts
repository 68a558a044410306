import type { AddressInfo, Server } from "node:net"
import { ConfigError } from "./config.ts"

/**
 * A server that could not listen, told as the variable that chose its port ("SLACK_PORT 3000
 * is in use") so start-up ends with one line and exit code 2; any other error is returned as is.
 */
export function portError(variable: string, port: number, error: unknown): unknown {
  switch ((error as NodeJS.ErrnoException | undefined)?.code) {
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
    const failed = (error: Error) => reject(portError(variable, port, error))
    server.once("error", failed)
    server.listen(port, host, () => {
      server.off("error", failed)
      resolve((server.address() as AddressInfo).port)
    })
  })
}
