/** A bridge request failed in a way the UI should show: `kind` is machine-readable, the message is for people. */
export class BridgeError extends Error {
  constructor(
    readonly kind: string,
    message: string,
  ) {
    super(message);
  }
}
