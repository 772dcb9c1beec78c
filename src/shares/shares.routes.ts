import { callerId } from '../http/caller.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import * as attachments from '../attachments/attachments.service.js';
import { sendAttachment } from '../attachments/serve.js';
import type { Db } from '../db/schema.js';
import type { RoutePolicy } from '../http/policy.js';
import { normalizeId } from '../shared/ids.js';
import * as schemas from './shares.schemas.js';
import * as shares from './shares.service.js';

export interface ShareRoutesOptions {
  db: Db;
  publicUrl: string;
  attachments: attachments.AttachmentServices;
}

const OWNER: RoutePolicy = { auth: 'access', note: 'owner' };
/** Anyone with the link: no credentials; the global per-address limit applies. */
const PUBLIC: RoutePolicy = { auth: 'public', noStore: true };
const tags = ['sharing'];

/** Pages that a link shows are nobody's to index, and the link must not leak through a Referer. */
const publicHeaders = { 'x-robots-tag': 'noindex', 'referrer-policy': 'no-referrer' };

/** Share links: the owner's management under /api/notes/{id}/shares, the public read under /api/shared. */
export const shareRoutes: FastifyPluginAsyncTypebox<ShareRoutesOptions> = async (
  app,
  { db, publicUrl, attachments: files },
) => {
  app.post(
    '/notes/:noteID/shares',
    {
      config: { policy: OWNER, failureDetail: 'Failed to create the link', docs: { errors: [404] } },
      schema: {
        tags,
        operationId: 'createShare',
        summary: 'Create a share link',
        description:
          'Anyone with the link reads the note without an account: its current version, or `version` for good (history retention ' +
          "then keeps that version). Optionally until `expires_at` (in the future, else 400). 404 for another user's or a trashed note.",
        params: schemas.NoteParams,
        body: schemas.CreateShareBody,
        response: { 201: schemas.ShareSchema },
      },
    },
    async (request, reply) => {
      const noteId = normalizeId(request.params.noteID);
      const created = await shares.createShare(db, publicUrl, callerId(request), noteId, request.body ?? {});
      return reply.code(201).send(created);
    },
  );

  app.get(
    '/notes/:noteID/shares',
    {
      config: { policy: OWNER, failureDetail: 'Failed to list the links', docs: { errors: [404] } },
      schema: {
        tags,
        operationId: 'listShares',
        summary: "The note's share links, newest first",
        params: schemas.NoteParams,
        response: { 200: Type.Array(schemas.ShareSchema) },
      },
    },
    async (request) => shares.listShares(db, publicUrl, callerId(request), normalizeId(request.params.noteID)),
  );

  app.delete(
    '/notes/:noteID/shares/:shareID',
    {
      config: { policy: OWNER, failureDetail: 'Failed to revoke the link', docs: { noContent: true, errors: [404] } },
      schema: {
        tags,
        operationId: 'revokeShare',
        summary: 'Revoke a share link',
        description: 'Effective at once.',
        params: schemas.ShareParams,
      },
    },
    async (request, reply) => {
      const noteId = normalizeId(request.params.noteID);
      await shares.revokeShare(db, callerId(request), noteId, normalizeId(request.params.shareID));
      return reply.code(204).send();
    },
  );

  app.get(
    '/shared/:token',
    {
      config: { policy: PUBLIC, failureDetail: 'Failed to read the shared note', docs: { errors: [404] } },
      schema: {
        tags,
        operationId: 'readShared',
        summary: 'Read a shared note (no credentials)',
        description:
          '404 Share not found, alike, for an unknown, revoked or expired link and for a note in the trash. Each read counts a view. ' +
          'Answers carry X-Robots-Tag: noindex and Referrer-Policy: no-referrer.',
        params: schemas.TokenParams,
        response: { 200: schemas.SharedNote },
      },
    },
    async (request, reply) => {
      reply.headers(publicHeaders);
      return shares.readShared(db, request.params.token);
    },
  );

  app.get(
    '/shared/:token/attachments/:attachmentID',
    {
      config: {
        policy: PUBLIC,
        failureDetail: 'Failed to read the file',
        docs: { errors: [404, 416], headers: { 200: ['ETag', 'Cache-Control'] } },
      },
      schema: {
        tags,
        operationId: 'readSharedAttachment',
        summary: 'A file the shared version links to (no credentials)',
        description:
          'Only files the version the link shows links to; anything else is 404 Share not found. Served as GET /api/attachments/{id}.',
        params: schemas.SharedAttachmentParams,
        response: {
          200: {
            description: 'the bytes',
            content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
          },
        },
      },
    },
    async (request, reply) => {
      const id = normalizeId(request.params.attachmentID);
      const { ownerId } = await shares.sharedAttachment(db, request.params.token, id);
      reply.headers(publicHeaders);
      return sendAttachment(files, request, reply, await attachments.find(files, ownerId, id));
    },
  );
};
