import type { FastifyRequest } from 'fastify';
import { Errors } from '../errors.js';
import { requireUserId, type Claims } from '../shared/claims.js';

export { requireUserId, subjectOf, type Claims } from '../shared/claims.js';

/**
 * The claims the access layer verified for this request (http/access.ts). Routes whose policy asks
 * for a caller always have them; without, the answer is the catalogue's 401, never a crash.
 */
export function callerClaims(request: FastifyRequest): Claims {
  if (request.claims === null) throw Errors.unauthorized();
  return request.claims;
}

/** The caller's user id (400 Invalid user ID for a sub that is not one, 401 without claims). */
export const callerId = (request: FastifyRequest): string => requireUserId(callerClaims(request));
