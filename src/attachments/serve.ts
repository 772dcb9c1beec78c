import type { FastifyReply, FastifyRequest } from 'fastify';
import { Errors } from '../errors.js';
import { open, type AttachmentServices } from './attachments.service.js';
import { INLINE_TYPES } from './content-type.js';
import { parseRange } from './range.js';

/** A name for Content-Disposition: ASCII fallback plus the exact name (RFC 6266, RFC 8187). */
function disposition(kind: 'inline' | 'attachment', filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}

/**
 * Answers with a file as the contract serves them, wherever it is asked for (the owner's route, a
 * share link's): safe types inline, the rest as downloads; nosniff and a sandbox CSP; the SHA-256
 * as ETag (304); one byte range (206, or 416 past the end).
 */
export function sendAttachment(
  services: AttachmentServices,
  request: FastifyRequest,
  reply: FastifyReply,
  row: { sha256: string; content_type: string; filename: string; size: number; storage_key: string },
  etag = `"${row.sha256}"`,
) {
  const inline = INLINE_TYPES.has(row.content_type);
  reply
    .header('etag', etag)
    .header('cache-control', 'private, no-cache')
    .header('content-security-policy', 'sandbox')
    .header('x-content-type-options', 'nosniff')
    .header('accept-ranges', 'bytes')
    .header('content-disposition', disposition(inline ? 'inline' : 'attachment', row.filename))
    .type(inline ? row.content_type : 'application/octet-stream');
  const match = request.headers['if-none-match'];
  if (
    match !== undefined &&
    (match.trim() === '*' || match.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag))
  ) {
    return reply.code(304).send();
  }
  const range = parseRange(request.headers.range, row.size);
  if (range === 'unsatisfiable') throw Errors.rangeNotSatisfiable(row.size);
  if (range === undefined) {
    reply.header('content-length', String(row.size));
    return reply.send(open(services, row.storage_key, row.size));
  }
  reply
    .code(206)
    .header('content-range', `bytes ${range.start}-${range.end}/${row.size}`)
    .header('content-length', String(range.end - range.start + 1));
  return reply.send(open(services, row.storage_key, row.size, range));
}
