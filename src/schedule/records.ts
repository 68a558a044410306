/** An event raised by name (`raised/<ulid>`); the CLI writes these from another process. */
export interface RaisedRecord {
  id: string
  name: string
  at: string
}

export const triggerKey = (id: string) => `trigger/${id}`
export const firingKey = (id: string) => `firing/${id}`
export const raisedKey = (id: string) => `raised/${id}`
