import { callerId } from '../http/caller.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Db } from '../db/schema.js';
import type { RoutePolicy } from '../http/policy.js';
import { normalizeId } from '../shared/ids.js';
import * as schemas from './members.schemas.js';
import * as members from './members.service.js';
import { noteOwnerOf } from './note-access.js';

const OWNER: RoutePolicy = { auth: 'access', note: 'owner' };
const MEMBER: RoutePolicy = { auth: 'access', note: 'viewer' };
const tags = ['sharing'];

/** People a note is shared with, under /api/notes/{id}/members (the caller's "Shared with me" is notes/shared-with-me.routes.ts). */
export const memberRoutes: FastifyPluginAsyncTypebox<{ db: Db }> = async (app, { db }) => {
  app.post(
    '/notes/:noteID/members',
    {
      config: { policy: OWNER, docs: { errors: [403, 404, 409] } },
      schema: {
        tags,
        operationId: 'addMember',
        summary: 'Share a note with someone',
        description:
          `The owner gives an account a role on the note. 404 \`User not found\` for an unknown username; 409 when it is the owner, ` +
          `already a member, or the note already has ${members.MEMBERS_MAX} members.`,
        params: schemas.NoteParams,
        body: schemas.AddMemberBody,
        response: { 201: schemas.MemberSchema },
      },
    },
    async (request, reply) => {
      const noteId = normalizeId(request.params.noteID);
      const member = await members.addMember(db, noteOwnerOf(request), noteId, request.body);
      return reply.code(201).send(member);
    },
  );

  app.get(
    '/notes/:noteID/members',
    {
      config: { policy: MEMBER, docs: { errors: [404] } },
      schema: {
        tags,
        operationId: 'listMembers',
        summary: 'The people a note is shared with',
        description: 'The owner and every member may see who else has the note.',
        params: schemas.NoteParams,
        response: { 200: Type.Array(schemas.MemberSchema) },
      },
    },
    async (request) => members.listMembers(db, noteOwnerOf(request), normalizeId(request.params.noteID)),
  );

  app.patch(
    '/notes/:noteID/members/:userID',
    {
      config: { policy: OWNER, docs: { errors: [403, 404] } },
      schema: {
        tags,
        operationId: 'changeMemberRole',
        summary: "Change a member's role",
        params: schemas.MemberParams,
        body: schemas.ChangeRoleBody,
        response: { 200: schemas.MemberSchema },
      },
    },
    async (request) => {
      const noteId = normalizeId(request.params.noteID);
      const member = await members.changeRole(
        db,
        noteOwnerOf(request),
        noteId,
        normalizeId(request.params.userID),
        request.body.role,
      );
      return member;
    },
  );

  app.delete(
    '/notes/:noteID/members/:userID',
    {
      config: { policy: MEMBER, docs: { noContent: true, errors: [403, 404] } },
      schema: {
        tags,
        operationId: 'removeMember',
        summary: 'Remove a member, or leave a note',
        description: 'The owner removes anyone; a member may remove only themselves (leave). Access ends at once.',
        params: schemas.MemberParams,
      },
    },
    async (request, reply) => {
      const noteId = normalizeId(request.params.noteID);
      const userId = normalizeId(request.params.userID);
      await members.removeMember(db, callerId(request), noteOwnerOf(request), noteId, userId);
      return reply.code(204).send();
    },
  );
};
