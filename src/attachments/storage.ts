import type { Readable } from 'node:stream';

/**
 * Where attachment bytes live, behind one small interface (HedgeDoc's lesson, #2310: notes link to
 * the app's own URL, so the storage can change without rewriting them). Keys are opaque and never
 * reused; what a key means (owner, hash) is kept in attachment_blobs.
 */
export interface AttachmentStorage {
  readonly kind: 'database' | 's3';
  /** Stores the bytes the iterable yields, as they come: nothing is held whole in memory. */
  put(key: string, body: AsyncIterable<Buffer>): Promise<void>;
  /** The bytes from `start` to `end` inclusive (the whole object when omitted); `size` is the object's. */
  get(key: string, size: number, range?: { start: number; end: number }): Readable;
  /** Removes the object; a missing one is not an error. */
  delete(key: string): Promise<void>;
}
