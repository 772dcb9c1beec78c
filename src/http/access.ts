import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { Errors } from '../errors.js';
import type { Claims, TokenService } from '../sessions/tokens.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Verified access-token claims, set by the access hook. */
    claims: Claims | null;
  }
  interface FastifyContextConfig {
    /** The 401 detail when this route gets no valid claims (logout says "Not authenticated"). */
    unauthenticated?: () => import('../errors.js').AppError;
  }
}

/** Spec §5.3: exactly two whitespace-separated fields, the first "bearer" in any case. */
export function parseBearer(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const fields = header.split(/\s+/).filter((f) => f !== '');
  if (fields.length !== 2 || fields[0]!.toLowerCase() !== 'bearer') return undefined;
  return fields[1];
}

export interface AuthHooks {
  /** Any valid access token. */
  access: onRequestAsyncHookHandler;
  /** An access token whose admin claim is true. */
  admin: onRequestAsyncHookHandler;
}

/** The caller's account as it is now: undefined when deleted. */
export type FindAccount = (userId: string) => Promise<{ is_admin: boolean } | undefined>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function createAuthHooks(tokens: TokenService, findAccount: FindAccount): AuthHooks {
  function authenticate(request: FastifyRequest): Claims {
    const token = parseBearer(request.headers.authorization);
    const claims = token === undefined ? null : tokens.verify(token);
    if (claims === null || claims.type !== 'access') {
      throw (request.routeOptions.config.unauthenticated ?? Errors.unauthorized)();
    }
    request.claims = claims;
    return claims;
  }
  return {
    access: async (request: FastifyRequest, _reply: FastifyReply) => {
      authenticate(request);
    },
    // The claim alone is not enough: an access token outlives a deletion or a demotion by up to its
    // lifetime, so every admin call reads the account as it is now.
    admin: async (request: FastifyRequest, _reply: FastifyReply) => {
      const claims = authenticate(request);
      if (!claims.admin) throw Errors.forbidden();
      const account = UUID.test(claims.sub) ? await findAccount(claims.sub.toLowerCase()) : undefined;
      if (account === undefined) throw Errors.unauthorized();
      if (!account.is_admin) throw Errors.forbidden();
    },
  };
}
