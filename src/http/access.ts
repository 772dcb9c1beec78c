import type { FastifyInstance, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { AppError, Errors } from '../errors.js';
import { isUuid } from '../shared/ids.js';
import type { Claims } from './caller.js';
import type { PolicyLayer } from './route-policy.js';

/** Routes turn the verified claims into the caller's id (services take the id, never claims; see caller.ts). */

declare module 'fastify' {
  interface FastifyRequest {
    /** Verified access-token claims, set by the access hook. */
    claims: Claims | null;
    /** The personal access token the caller came with, if any (a live stream ends when it goes). */
    personalToken: PersonalToken | null;
  }
  interface FastifyContextConfig {
    /** The 401 detail when this route gets no valid claims (logout says "Not authenticated"). */
    unauthenticated?: () => AppError;
  }
}

/** Spec §5.3: exactly two whitespace-separated fields, the first "bearer" in any case. */
export function parseBearer(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const fields = header.split(/\s+/).filter((f) => f !== '');
  if (fields.length !== 2 || fields[0]!.toLowerCase() !== 'bearer') return undefined;
  return fields[1];
}

export type PersonalScope = 'notes:read' | 'notes:write' | 'dav';

/** A personal access token that authenticated a request: its id, and when it expires (null: never). */
export interface PersonalToken {
  id: string;
  expiresAt: string | null;
}

/** Personal access tokens, as the access layer needs them (access-tokens/tokens.service.ts). */
export interface PersonalTokens {
  looksLike(token: string): boolean;
  /**
   * The user and the token, if the token is valid, live and has the scope; 'insufficient_scope' if it
   * is valid and live but lacks the scope; undefined otherwise.
   */
  authenticate(
    token: string,
    scope: PersonalScope,
  ): Promise<(PersonalToken & { userId: string }) | 'insufficient_scope' | undefined>;
}

/** Whether the session an access token was issued with is still alive (sessions/session-binding.ts). */
export type SessionCheck = (claims: Claims) => Promise<boolean>;

/**
 * Whether the account behind these verified claims still lets an access token in (not disabled,
 * the token not older than a re-enabling): accounts/account-status.ts, cached per instance.
 */
export type AccountAllows = (claims: Claims) => Promise<boolean>;

/** The caller's account as it is now: undefined when deleted. */
export type FindAccount = (
  userId: string,
) => Promise<{ is_admin: boolean; username: string; disabled: boolean } | undefined>;

/** `Basic base64(username:password)` (RFC 7617), or undefined when the header is not that. */
export function parseBasic(header: string | undefined): { username: string; password: string } | undefined {
  const match = /^basic\s+([A-Za-z0-9+/]+={0,2})\s*$/i.exec(header ?? '');
  if (match === null) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? undefined : { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** Counts a failed credential against its address's WebDAV budget; throws 429 past it (rate-limit.ts). */
export type CredentialFailure = (request: FastifyRequest) => Promise<void>;

/**
 * What the access layer asks of the features, built in app.ts: this folder imports none of them
 * (test/architecture.test.ts), so each brings its part here.
 */
export interface AccessOptions {
  /** The verified claims of a well-formed token, or null (sessions/tokens.ts); the layer checks the type. */
  verify: (token: string) => Claims | null;
  findAccount: FindAccount;
  /** A username in the form accounts keep it (accounts/username.ts), to compare a Basic username with. */
  normalizeUsername: (username: string) => string;
  personal: PersonalTokens;
  sessionIsLive: SessionCheck;
  accountAllows: AccountAllows;
  credentialFailure?: CredentialFailure | undefined;
}

/**
 * The `access` layer (route-policy.ts): enforces each route's `policy.auth` (policy.ts) with a hook
 * before the route's own. access needs a valid access token, admin one of an account that is an
 * administrator now.
 */
export function accessControl(app: FastifyInstance, options: AccessOptions): PolicyLayer {
  const { verify, findAccount, normalizeUsername, personal, sessionIsLive, accountAllows, credentialFailure } = options;
  function authenticate(request: FastifyRequest, unauthenticated: () => AppError): Claims {
    const token = parseBearer(request.headers.authorization);
    const claims = token === undefined ? null : verify(token);
    if (claims === null || claims.type !== 'access') throw unauthenticated();
    request.claims = claims;
    return claims;
  }
  /**
   * A personal access token, where the route takes one (never under /api/auth): the user it names
   * becomes the caller, with claims of an access token that grants no administration.
   */
  async function authenticatePersonal(
    request: FastifyRequest,
    token: string,
    scope: PersonalScope,
    unauthenticated: () => AppError,
  ): Promise<void> {
    const found = await personal.authenticate(token, scope);
    // A good token without the scope is not a failed sign-in: 403 naming the scope it needs (issue #42).
    // WebDAV keeps its 401 and Basic challenge, which asks the client for another credential.
    if (found === 'insufficient_scope' && scope !== 'dav') throw Errors.insufficientScope(scope);
    if (found === undefined || found === 'insufficient_scope') throw unauthenticated();
    const now = Math.floor(Date.now() / 1000);
    request.claims = {
      sub: found.userId,
      admin: false,
      type: 'access',
      jti: 'personal-token',
      iat: now,
      nbf: now,
      exp: now + 60,
    };
    request.personalToken = { id: found.id, expiresAt: found.expiresAt };
  }
  /**
   * WebDAV: Basic with the username and a personal token of scope `dav` (never the account
   * password), or a bearer token; OPTIONS goes without, as clients probe the server before they
   * authenticate, and so does the first request of many clients, which a 401 answers.
   *
   * A credential that fails counts against a per-address budget of its own, as large as the login
   * budget (429 past it), so one address guesses no faster here than at /auth/login, and a stale
   * token in a sync client never locks its network out of web login. It does not count against
   * the account's lockout, and a lockout does not stop a token: a personal token has 190+ random
   * bits and the password is never checked here, so there is nothing here for the lockout to
   * protect, and counting here let anyone lock anyone's web login with five requests (issue #37,
   * finding 8).
   */
  async function authenticateDav(request: FastifyRequest): Promise<void> {
    if (request.method === 'OPTIONS') return;
    const header = request.headers.authorization;
    if (header === undefined) throw Errors.davUnauthorized();
    try {
      await checkDavCredentials(request, header);
    } catch (error) {
      if (error instanceof AppError && error.status === 401) await credentialFailure?.(request);
      throw error;
    }
  }
  async function checkDavCredentials(request: FastifyRequest, header: string): Promise<void> {
    const basic = parseBasic(header);
    if (basic === undefined) {
      const token = parseBearer(header);
      if (token === undefined) throw Errors.davUnauthorized();
      if (personal.looksLike(token)) return authenticatePersonal(request, token, 'dav', Errors.davUnauthorized);
      const claims = authenticate(request, Errors.davUnauthorized);
      // A sync client holds its connection for long: a disabled account's access token stops here at once.
      if (!(await accountAllows(claims))) throw Errors.davUnauthorized();
      return;
    }
    const username = normalizeUsername(basic.username);
    const answer = personal.looksLike(basic.password) ? await personal.authenticate(basic.password, 'dav') : undefined;
    const found = answer === 'insufficient_scope' ? undefined : answer;
    const account = found === undefined ? undefined : await findAccount(found.userId);
    if (found === undefined || account?.username !== username || account.disabled) throw Errors.davUnauthorized();
    const now = Math.floor(Date.now() / 1000);
    request.claims = {
      sub: found.userId,
      admin: false,
      type: 'access',
      jti: 'personal-token',
      iat: now,
      nbf: now,
      exp: now + 60,
    };
    request.personalToken = { id: found.id, expiresAt: found.expiresAt };
  }
  app.decorateRequest('claims', null);
  app.decorateRequest('personalToken', null);
  return ({ auth }, route) => {
    if (auth === 'dav') return { onRequest: [authenticateDav] };
    if (auth !== 'access' && auth !== 'admin') return undefined;
    const unauthenticated = route.config?.unauthenticated ?? Errors.unauthorized;
    // Reads need notes:read, everything else notes:write; account and session routes take none.
    const takesPersonal = auth === 'access' && !route.url.startsWith('/api/auth');
    // Every account and session route, this one included, refuses an access token whose session has
    // ended (docs/api.md, "Token binding": "on every /auth/* route at once"): by the prefix, as above, so
    // a route added there later cannot forget it. A read of the database per call: these are rare.
    const boundToSession = route.url.startsWith('/api/auth');
    // Elsewhere the token is stateless but for its account: disabling one stops its tokens at once
    // (CONTRACT.md part 3), from a status each instance caches and every instance is told to forget.
    // Under /api/auth the session read already covers it: disabling ends every session.
    const requireLiveSession = async (claims: Claims) => {
      if (boundToSession ? !(await sessionIsLive(claims)) : !(await accountAllows(claims))) throw unauthenticated();
    };
    const methods = [route.method].flat();
    const scope: PersonalScope = methods.every((m) => m === 'GET' || m === 'HEAD') ? 'notes:read' : 'notes:write';
    const hook: onRequestAsyncHookHandler =
      auth === 'access'
        ? async (request) => {
            const token = parseBearer(request.headers.authorization);
            if (token !== undefined && personal.looksLike(token)) {
              if (!takesPersonal) throw unauthenticated();
              return authenticatePersonal(request, token, scope, unauthenticated);
            }
            await requireLiveSession(authenticate(request, unauthenticated));
          }
        : // The claim alone is not enough: an access token outlives a deletion or a demotion by up to
          // its lifetime, so every admin call reads the account as it is now.
          async (request) => {
            const claims = authenticate(request, unauthenticated);
            await requireLiveSession(claims);
            if (!claims.admin) throw Errors.forbidden();
            const account = isUuid(claims.sub) ? await findAccount(claims.sub.toLowerCase()) : undefined;
            if (account === undefined || account.disabled) throw Errors.unauthorized();
            if (!account.is_admin) throw Errors.forbidden();
          };
    return { onRequest: [hook] };
  };
}
