/** An event raised by name (id: a ULID); the CLI writes these from another process. */
export interface RaisedRecord {
  id: string
  name: string
  at: string
}
