import type { FastifyRequest } from 'fastify';
import { Errors } from '../errors.js';
import { isUuid } from '../shared/ids.js';

export type TokenType = 'access' | 'refresh';

/**
 * What a verified token says. Defined here, where the access layer puts it on the request; the
 * tokens are signed and verified in sessions/tokens.ts, which app.ts hands to the access layer.
 */
export interface Claims {
  sub: string;
  admin: boolean;
  type: TokenType;
  jti: string;
  iat: number;
  nbf: number;
  exp: number;
}

/** The user id a token names; a sub that is not a UUID is 400 Invalid user ID (spec). */
export function requireUserId(claims: Claims): string {
  if (!isUuid(claims.sub)) throw Errors.invalidUserId();
  return claims.sub.toLowerCase();
}

/** The user id a token names, or null when its sub is not a UUID (recorded as an unknown actor). */
export const subjectOf = (claims: Claims): string | null => (isUuid(claims.sub) ? claims.sub.toLowerCase() : null);

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
