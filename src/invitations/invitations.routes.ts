import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { callerClaims, subjectOf } from '../http/caller.js';
import { clientInfo } from '../http/client-info.js';
import type { RoutePolicy } from '../http/policy.js';
import { absentBodyAsEmpty } from '../http/schemas.js';
import { normalizeId } from '../shared/ids.js';
import * as schemas from './invitations.schemas.js';
import * as invitations from './invitations.service.js';

export interface InvitationRoutesOptions {
  services: invitations.InvitationServices;
}

const ADMIN: RoutePolicy = { auth: 'admin', noStore: true };
const tags = ['admin'];

/** Invitations (SIGNUP=invite, or closed): the administrators' links; under /api/auth. */
export const invitationRoutes: FastifyPluginAsyncTypebox<InvitationRoutesOptions> = async (app, { services }) => {
  app.post(
    '/admin/invitations',
    {
      preValidation: absentBodyAsEmpty,
      config: { policy: ADMIN, failureDetail: 'Failed to create the invitation' },
      schema: {
        tags,
        operationId: 'createInvitation',
        summary: 'Invite someone',
        description:
          'A single-use sign-up link, valid `expires_in_days` (default 7): `url` is `{PUBLIC_URL}/signup?invitation={token}`. ' +
          'POST /auth/signup with `invitation` set to the token creates the account (an administrator when `admin`), whatever ' +
          'SIGNUP says. The token is in this answer only; the server keeps its SHA-256.',
        body: Type.Optional(schemas.CreateInvitationBody),
        response: { 201: schemas.CreatedInvitation },
      },
    },
    async (request, reply) => {
      const body = request.body ?? {};
      const created = await invitations.createInvitation(
        services,
        subjectOf(callerClaims(request)),
        { email: body.email, admin: body.admin, expiresInDays: body.expires_in_days },
        clientInfo(request),
      );
      return reply.code(201).send(created);
    },
  );

  app.get(
    '/admin/invitations',
    {
      config: { policy: ADMIN, failureDetail: 'Failed to list the invitations' },
      schema: {
        tags,
        operationId: 'listInvitations',
        summary: 'List the open invitations',
        description: 'The unused, unexpired invitations, newest first (at most 500), without their tokens.',
        response: { 200: schemas.InvitationList },
      },
    },
    async () => invitations.listInvitations(services),
  );

  app.delete(
    '/admin/invitations/:id',
    {
      config: { policy: ADMIN, failureDetail: 'Failed to revoke the invitation', docs: { errors: [404] } },
      schema: {
        tags,
        operationId: 'revokeInvitation',
        summary: 'Revoke an invitation',
        description: 'The link stops working at once; 404 for an unknown or already used invitation.',
        params: schemas.InvitationIdParams,
      },
    },
    async (request, reply) => {
      await invitations.revokeInvitation(
        services,
        subjectOf(callerClaims(request)),
        normalizeId(request.params.id),
        clientInfo(request),
      );
      return reply.code(204).send();
    },
  );
};
