import { callerId } from '../http/caller.js';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Db } from '../db/schema.js';
import type { PolicyLayer } from '../http/route-policy.js';
import { normalizeId } from '../shared/ids.js';
import { actingOwner, OwnerCache } from './members.service.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Whose note the caller acts on (the `note` policy): the caller, or the owner of a note shared with them. */
    noteOwner: string | null;
  }
}

/**
 * The `note` layer (http/route-policy.ts): on every route that names a note (`noteID`) and
 * declares the role it needs, who owns the note the caller may act on, or 403 for a member whose
 * role is not enough. After validation (a malformed id is still its 400) and authentication.
 */
export function noteAccess(app: FastifyInstance, db: Db): PolicyLayer {
  app.decorateRequest('noteOwner', null);
  const owners = new OwnerCache();
  return ({ note }) => {
    if (note === undefined) return undefined;
    return {
      preHandler: [
        async (request: FastifyRequest) => {
          const noteId = normalizeId((request.params as { noteID: string }).noteID);
          request.noteOwner = await actingOwner(db, owners, callerId(request), noteId, note);
        },
      ],
    };
  };
}

/** The owner the `note` layer settled on (routes with a `note` policy only). */
export function noteOwnerOf(request: FastifyRequest): string {
  if (request.noteOwner === null) throw new Error('noteOwnerOf: the route declares no note policy');
  return request.noteOwner;
}
