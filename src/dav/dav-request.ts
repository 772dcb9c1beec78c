import type { Readable } from 'node:stream';
import { Errors } from '../errors.js';
import { parseXml, type XmlElement } from './xml.js';

/**
 * XML bodies (PROPFIND, PROPPATCH, LOCK) are small; dead properties are not a file store (litmus'
 * largest is under 1 KB). 256 KiB: saxes reads some shapes a character at a time (one CDATA
 * section of `]`, a processing instruction of `?`, CR LF text), and at 1 MiB those held the event
 * loop 130-530 ms (review of #37); at 256 KiB, a tenth of that.
 */
export const XML_MAX_BYTES = 256 * 1024;

/**
 * The request headers WebDAV's methods read, as sent: each method parses a header (and refuses a
 * malformed one) at the point of its checks where it always did, so the first failure stays the same.
 */
export interface DavHeaders {
  if: string | undefined;
  ifMatch: string | undefined;
  ifNoneMatch: string | undefined;
  /** Trimmed and lower case. */
  depth: string | undefined;
  destination: string | undefined;
  overwrite: string | undefined;
  timeout: string | undefined;
  /** The token inside `Lock-Token: <token>`; undefined when the header is absent or not that. */
  lockToken: string | undefined;
}

/**
 * The request body, left unparsed by Fastify and read when a method gets to it (never before its
 * earlier checks), each kind within its limit.
 */
export interface DavBody {
  /** The whole body up to `limit` bytes; `tooLarge` past it. */
  bytes(limit: number, tooLarge: () => Error): Promise<Buffer>;
  /** The body as it arrives (a file's upload). */
  stream(): AsyncIterable<Buffer>;
  /** The body parsed as XML; undefined when empty. */
  xml(): Promise<XmlElement | undefined>;
}

export function davBody(body: unknown): DavBody {
  async function bytes(limit: number, tooLarge: () => Error): Promise<Buffer> {
    if (body === undefined || body === null) return Buffer.alloc(0);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of body as Readable) {
      size += (chunk as Buffer).length;
      if (size > limit) throw tooLarge();
      chunks.push(chunk as Buffer);
    }
    return Buffer.concat(chunks);
  }
  async function* stream(): AsyncGenerator<Buffer> {
    if (body === undefined || body === null) return;
    for await (const chunk of body as Readable) yield chunk as Buffer;
  }
  async function xml(): Promise<XmlElement | undefined> {
    const read = await bytes(XML_MAX_BYTES, Errors.bodyTooLarge);
    if (read.length === 0) return undefined;
    return parseXml(read.toString('utf8'));
  }
  return { bytes, stream, xml };
}

/** No body at all (LOCK on an unmapped URL creates an empty resource). */
export const NO_BODY: DavBody = davBody(undefined);
