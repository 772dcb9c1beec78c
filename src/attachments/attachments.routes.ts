import { callerId } from '../http/caller.js';
import multipart from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AppError, Errors } from '../errors.js';
import type { RoutePolicy } from '../http/policy.js';
import { pageOf } from '../http/schemas.js';
import { normalizeId } from '../shared/ids.js';
import * as schemas from './attachments.schemas.js';
import * as attachments from './attachments.service.js';
import { sendAttachment } from './serve.js';

export interface AttachmentRoutesOptions {
  services: attachments.AttachmentServices;
}

const SIGNED_IN: RoutePolicy = { auth: 'access' };
const tags = ['attachments'];
/** What the parser does with parts besides the file, said in the document (an object schema cannot say it). */
const UPLOAD_PARTS_RULE =
  'Only the file part named "file" is read, one file per request: another file part before it is refused (400), ' +
  'and other parts are not read.';

/** Files: upload, download, list, usage, delete; under /api/attachments. */
export const attachmentRoutes: FastifyPluginAsyncTypebox<AttachmentRoutesOptions> = async (app, { services }) => {
  // Only here: the rest of the API never parses multipart bodies.
  await app.register(multipart, {
    limits: { files: 1, fields: 10, fieldSize: 1024, parts: 20, headerPairs: 50, fileSize: services.maxBytes + 1 },
  });

  app.post(
    '/',
    {
      config: { policy: SIGNED_IN, failureDetail: 'Failed to store the file', docs: { errors: [413, 415] } },
      schema: {
        tags,
        operationId: 'uploadAttachment',
        summary: 'Upload a file',
        description:
          'multipart/form-data with one file part named "file", streamed to storage. Over ATTACHMENT_MAX_BYTES (25 MiB by default) ' +
          'or over the space left of STORAGE_QUOTA_BYTES: 413 with a readable body, also while the file is still arriving. ' +
          'Identical bytes are stored once and counted once. Link it in a note as ![alt](/api/attachments/{id}). ' +
          'A request without a multipart/form-data body (no body at all, or another content type) is 415. ' +
          UPLOAD_PARTS_RULE,
        consumes: ['multipart/form-data'],
        body: schemas.UploadBody,
        response: { 201: schemas.AttachmentSchema },
      },
      // The multipart parser hands the handler the stream; the file part is checked as it is read.
      validatorCompiler: (route) => (route.httpPart === 'body' ? () => true : app.validatorCompiler!(route)),
    },
    async (request, reply) => {
      const ownerId = callerId(request);
      if (!request.isMultipart()) {
        throw Errors.unsupportedMediaType('Send the file as multipart/form-data, in a part named "file"');
      }
      let file;
      try {
        file = await request.file({ throwFileSizeLimit: false });
      } catch (error) {
        // The parser's own refusals (limits) keep their status; anything else it throws is a body it
        // could not read (no boundary in it, a broken part header): the client's, a 400.
        const status = (error as { statusCode?: unknown }).statusCode;
        if (error instanceof AppError || (typeof status === 'number' && status < 500)) throw error;
        throw Errors.validation('The multipart body is malformed');
      }
      if (file === undefined || file.fieldname !== 'file') {
        file?.file.resume();
        throw Errors.validation('The multipart body must have one file part named "file"');
      }
      try {
        const created = await attachments.upload(services, ownerId, {
          filename: file.filename,
          mimetype: file.mimetype,
          stream: file.file,
        });
        return reply.code(201).send(created);
      } catch (error) {
        // Let the parser read the rest, so the client reads this answer instead of a reset.
        file.file.resume();
        throw error;
      }
    },
  );

  app.get(
    '/',
    {
      config: { policy: SIGNED_IN, failureDetail: 'Failed to list attachments' },
      schema: {
        tags,
        operationId: 'listAttachments',
        summary: "The caller's files, newest first",
        description: 'Each with `references`: how many versions (current or old, trash included) link to it.',
        querystring: schemas.AttachmentList,
        response: { 200: Type.Array(schemas.AttachmentRow) },
      },
    },
    async (request) => {
      const { limit, offset } = pageOf(request.query);
      return attachments.list(services, callerId(request), limit, offset);
    },
  );

  app.get(
    '/usage',
    {
      config: { policy: SIGNED_IN, failureDetail: 'Failed to read storage usage' },
      schema: {
        tags,
        operationId: 'attachmentUsage',
        summary: 'Storage used and the quota',
        response: { 200: schemas.Usage },
      },
    },
    async (request) => attachments.usage(services, callerId(request)),
  );

  app.get(
    '/:attachmentID',
    {
      config: {
        policy: SIGNED_IN,
        failureDetail: 'Failed to read the file',
        docs: {
          errors: [404, 416],
          headers: { 200: ['ETag', 'Cache-Control'], 206: ['ETag', 'Cache-Control'], 304: ['ETag', 'Cache-Control'] },
        },
      },
      schema: {
        tags,
        operationId: 'getAttachment',
        summary: 'Download a file',
        description:
          'PNG, JPEG, GIF, WebP, AVIF and PDF inline with their type; everything else as application/octet-stream with ' +
          'Content-Disposition: attachment. ETag is the SHA-256 (If-None-Match: 304); one Range of bytes gives 206; ' +
          'Cache-Control: private, no-cache (a browser keeps it, and asks again whether it may still show it). ' +
          "Besides the caller's own files, those that a version of a note shared with the caller links to.",
        params: schemas.AttachmentParams,
        response: {
          200: {
            description: 'the bytes',
            content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
          },
          206: {
            description: 'the requested range of bytes (Content-Range says which)',
            content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
          },
          304: { description: 'If-None-Match named the current ETag', type: 'null' },
        },
      },
    },
    async (request, reply) => {
      const row = await attachments.findReadable(services, callerId(request), normalizeId(request.params.attachmentID));
      return sendAttachment(services, request, reply, row);
    },
  );

  app.delete(
    '/:attachmentID',
    {
      config: {
        policy: SIGNED_IN,
        failureDetail: 'Failed to delete the file',
        docs: { noContent: true, errors: [404, 409] },
      },
      schema: {
        tags,
        operationId: 'deleteAttachment',
        summary: 'Delete a file',
        description: '409 while any version (current or old, trash included) links to it.',
        params: schemas.AttachmentParams,
      },
    },
    async (request, reply) => {
      await attachments.remove(services, callerId(request), normalizeId(request.params.attachmentID));
      return reply.code(204).send();
    },
  );
};
