// Errors the package's functions reject with, as classes a host can test with `instanceof`.
// The errors are made in Rust (the kinds and numbers are decided there); these classes only
// name them, so `instanceof` holds for an error made by the wasm as well as one made here.

/**
 * A session log refused an append (`toChatResponse`, session-log `append`): `kind` is
 * `'stale-epoch'` (with `currentEpoch`: a newer claim owns the turn; nothing from this writer was
 * stored), `'sequence-gap'` (`expectedSeq`, `receivedSeq`), `'stream-closed'`, `'retryable'` or
 * `'failed'`. A host-implemented log throws it the same way.
 */
export class ChatProducerError extends Error {
  constructor(message, { kind, currentEpoch, expectedSeq, receivedSeq, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'ChatProducerError';
    this.kind = kind;
    if (currentEpoch !== undefined) this.currentEpoch = currentEpoch;
    if (expectedSeq !== undefined) this.expectedSeq = expectedSeq;
    if (receivedSeq !== undefined) this.receivedSeq = receivedSeq;
  }

  /** True for any Error named ChatProducerError with a `kind`, wherever it was made. */
  static [Symbol.hasInstance](value) {
    return value instanceof Error && value.name === 'ChatProducerError' && typeof value.kind === 'string';
  }
}
