import multipart from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AppError, Errors } from '../errors.js';
import type { RoutePolicy } from '../http/policy.js';
import { pageOf } from '../http/schemas.js';
import { requireUserId } from '../sessions/tokens.js';
import { normalizeId } from '../shared/ids.js';
import * as schemas from './attachments.schemas.js';
import * as attachments from './attachments.service.js';
import { INLINE_TYPES } from './content-type.js';
import { parseRange } from './range.js';

export interface AttachmentRoutesOptions {
  services: attachments.AttachmentServices;
}

const SIGNED_IN: RoutePolicy = { auth: 'access' };
const tags = ['attachments'];

/** A name for Content-Disposition: ASCII fallback plus the exact name (RFC 6266, RFC 8187). */
function disposition(kind: 'inline' | 'attachment', filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}

/** Files: upload, download, list, usage, delete; under /api/attachments. */
export const attachmentRoutes: FastifyPluginAsyncTypebox<AttachmentRoutesOptions> = async (app, { services }) => {
  // Only here: the rest of the API never parses multipart bodies.
  await app.register(multipart, { limits: { files: 1, fields: 10, fieldSize: 1024, parts: 20, headerPairs: 50, fileSize: services.maxBytes + 1 } });

  app.post('/', {
    config: { policy: SIGNED_IN, failureDetail: 'Failed to store the file', docs: { errors: [413, 415] } },
    schema: {
      tags, operationId: 'uploadAttachment', summary: 'Upload a file',
      description: 'multipart/form-data with one file part named "file", streamed to storage. Over ATTACHMENT_MAX_BYTES (25 MiB by default) '
        + 'or over the space left of STORAGE_QUOTA_BYTES: 413 with a readable body, also while the file is still arriving. '
        + 'Identical bytes are stored once and counted once. Link it in a note as ![alt](/api/attachments/{id}).',
      consumes: ['multipart/form-data'],
      body: schemas.UploadBody,
      response: { 201: schemas.AttachmentSchema },
    },
    // The multipart parser hands the handler the stream; the file part is checked as it is read.
    validatorCompiler: (route) => (route.httpPart === 'body' ? () => true : app.validatorCompiler!(route)),
  }, async (request, reply) => {
    const ownerId = requireUserId(request.claims!);
    if (!request.isMultipart()) {
      throw new AppError(415, 'unsupported_media_type', 'Send the file as multipart/form-data, in a part named "file"');
    }
    const file = await request.file({ throwFileSizeLimit: false });
    if (file === undefined || file.fieldname !== 'file') {
      file?.file.resume();
      throw Errors.validation('The multipart body must have one file part named "file"');
    }
    try {
      const created = await attachments.upload(services, ownerId, { filename: file.filename, mimetype: file.mimetype, stream: file.file });
      return reply.code(201).send(created);
    } catch (error) {
      // Let the parser read the rest, so the client reads this answer instead of a reset.
      file.file.resume();
      throw error;
    }
  });

  app.get('/', {
    config: { policy: SIGNED_IN, failureDetail: 'Failed to list attachments' },
    schema: {
      tags, operationId: 'listAttachments', summary: 'The caller\'s files, newest first',
      description: 'Each with `references`: how many versions (current or old, trash included) link to it.',
      querystring: schemas.AttachmentList, response: { 200: Type.Array(schemas.AttachmentRow) },
    },
  }, async (request) => {
    const { limit, offset } = pageOf(request.query);
    return attachments.list(services, requireUserId(request.claims!), limit, offset);
  });

  app.get('/usage', {
    config: { policy: SIGNED_IN, failureDetail: 'Failed to read storage usage' },
    schema: { tags, operationId: 'attachmentUsage', summary: 'Storage used and the quota', response: { 200: schemas.Usage } },
  }, async (request) => attachments.usage(services, requireUserId(request.claims!)));

  app.get('/:attachmentID', {
    config: { policy: SIGNED_IN, failureDetail: 'Failed to read the file', docs: { errors: [404, 416], headers: { 200: ['ETag', 'Cache-Control'], 206: ['ETag', 'Cache-Control'], 304: ['ETag', 'Cache-Control'] } } },
    schema: {
      tags, operationId: 'getAttachment', summary: 'Download a file',
      description: 'PNG, JPEG, GIF, WebP, AVIF and PDF inline with their type; everything else as application/octet-stream with '
        + 'Content-Disposition: attachment. ETag is the SHA-256 (If-None-Match: 304); one Range of bytes gives 206; '
        + 'Cache-Control: private, no-cache (a browser keeps it, and asks again whether it may still show it).',
      params: schemas.AttachmentParams,
      response: {
        200: { description: 'the bytes', content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } },
        206: { description: 'the requested range of bytes (Content-Range says which)', content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } },
        304: { description: 'If-None-Match named the current ETag', type: 'null' },
      },
    },
  }, async (request, reply) => {
    const row = await attachments.find(services, requireUserId(request.claims!), normalizeId(request.params.attachmentID));
    const inline = INLINE_TYPES.has(row.content_type);
    const etag = `"${row.sha256}"`;
    reply
      .header('etag', etag)
      .header('cache-control', 'private, no-cache')
      .header('content-security-policy', 'sandbox')
      .header('x-content-type-options', 'nosniff')
      .header('accept-ranges', 'bytes')
      .header('content-disposition', disposition(inline ? 'inline' : 'attachment', row.filename))
      .type(inline ? row.content_type : 'application/octet-stream');
    const match = request.headers['if-none-match'];
    if (match !== undefined && (match.trim() === '*' || match.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag))) {
      return reply.code(304 as 200).send();
    }
    const range = parseRange(request.headers.range, row.size);
    if (range === 'unsatisfiable') throw Errors.rangeNotSatisfiable(row.size);
    if (range === undefined) {
      reply.header('content-length', String(row.size));
      return reply.send(attachments.open(services, row.storage_key, row.size) as never);
    }
    reply.code(206 as 200).header('content-range', `bytes ${range.start}-${range.end}/${row.size}`).header('content-length', String(range.end - range.start + 1));
    return reply.send(attachments.open(services, row.storage_key, row.size, range) as never);
  });

  app.delete('/:attachmentID', {
    config: { policy: SIGNED_IN, failureDetail: 'Failed to delete the file', docs: { noContent: true, errors: [404, 409] } },
    schema: {
      tags, operationId: 'deleteAttachment', summary: 'Delete a file',
      description: '409 while any version (current or old, trash included) links to it.',
      params: schemas.AttachmentParams,
    },
  }, async (request, reply) => {
    await attachments.remove(services, requireUserId(request.claims!), normalizeId(request.params.attachmentID));
    return reply.code(204).send();
  });
};
