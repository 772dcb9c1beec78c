import { applyAwarenessUpdate, modifyAwarenessUpdate, type Awareness } from 'y-protocols/awareness';

/**
 * The name beside a cursor is the account's, never what the client claims. Clients announce
 * `user: { name, color, colorLight }` in their awareness state and the other clients draw it; a
 * client could claim anyone's name (or another client's id). Each awareness message from a
 * connection is therefore rewritten before it is applied: every state it carries gets `user` from
 * the connection's authenticated account. The rewritten message is applied first, with the same
 * clocks, so Hocuspocus' own handling of the original message right after finds nothing newer and
 * does nothing; what it and the Redis extension send on is read from the rewritten states.
 */

/** Each person's colour, chosen by their username (the web client's PALETTE, web/src/notes/people-colours.ts). */
const PALETTE = ['#1f5fbf', '#a3327a', '#2f6f3e', '#8a4b00', '#6b3fa0', '#b3261e'];

export function colourFor(name: string): string {
  let hash = 0;
  for (let i = 0; i < name.length; i += 1) hash = (hash * 31 + name.charCodeAt(i)) | 0;
  return PALETTE[Math.abs(hash) % PALETTE.length]!;
}

/** The identity shown for an account's cursor. */
export function identityOf(username: string): { name: string; color: string; colorLight: string } {
  const color = colourFor(username);
  return { name: username, color, colorLight: `${color}33` };
}

/** Hocuspocus' message type of an awareness update (MessageType.Awareness). */
const AWARENESS = 1;
/** Hocuspocus' message type of a stateless message to send on to every connection (MessageType.BroadcastStateless). */
export const BROADCAST_STATELESS = 6;

/** The type of a message from a client (document name, type, payload); throws on one that cannot be read. */
export function messageTypeOf(message: Uint8Array): number {
  const reader = new Reader(message);
  reader.skip(reader.varUint()); // the document's name
  return reader.varUint();
}

/** The document a message from a client is for; throws on one that cannot be read. */
export function documentNameOf(message: Uint8Array): string {
  const reader = new Reader(message);
  return Buffer.from(reader.bytes(reader.varUint())).toString('utf8');
}

/**
 * For a message from a client (`message`: document name, type, payload): when it is an awareness
 * update, applies it with every state's `user` replaced by `username`'s identity. Returns whether
 * it did. Throws on a message that cannot be read (the connection is closed): unread, it would
 * reach Hocuspocus as sent.
 */
export function applyVouched(awareness: Awareness, message: Uint8Array, username: string, origin: unknown): boolean {
  const reader = new Reader(message);
  reader.skip(reader.varUint()); // the document's name
  if (reader.varUint() !== AWARENESS) return false;
  const update = reader.bytes(reader.varUint());
  const user = identityOf(username);
  const vouched = modifyAwarenessUpdate(update, (state: unknown) =>
    state === null ? null : { ...(typeof state === 'object' && !Array.isArray(state) ? state : {}), user },
  );
  applyAwarenessUpdate(awareness, vouched, origin);
  return true;
}

/** lib0's variable-length unsigned integers and byte runs, as far as the message's head needs. */
class Reader {
  private at = 0;
  constructor(private readonly data: Uint8Array) {}

  varUint(): number {
    let value = 0;
    let multiplier = 1;
    for (;;) {
      if (this.at >= this.data.length) throw new RangeError('message ended');
      const byte = this.data[this.at++]!;
      value += (byte & 0x7f) * multiplier;
      if (byte < 0x80) return value;
      multiplier *= 128;
      if (multiplier > 2 ** 53) throw new RangeError('integer too long');
    }
  }

  skip(length: number): void {
    if (this.at + length > this.data.length) throw new RangeError('message ended');
    this.at += length;
  }

  bytes(length: number): Uint8Array {
    const start = this.at;
    this.skip(length);
    return this.data.subarray(start, start + length);
  }
}
