import type { RouteOptions } from 'fastify';

/**
 * What a route demands of its callers, declared in its own options (`config.policy`) and read once
 * as the route is added: by route-policy.ts, which asks each layer for its hooks (access.ts,
 * rate-limit.ts, shed.ts, security-headers.ts, sessions/cookie-plugin.ts, sessions/login-throttle.ts)
 * and attaches them in one declared order, and by the OpenAPI document (security, 401/403). No
 * layer keeps a table of URLs, so a renamed or added route keeps exactly what it declares.
 */
export interface RoutePolicy {
  /**
   * public: anyone. access: a valid access token (under /api/auth, also of a session still alive,
   * read on every call: sessions/session-binding.ts). admin: that, of an account that is an
   * administrator now (re-read on every call). cookie: the refresh cookie, parsed for the route,
   * which checks it (and CSRF) itself. dav: WebDAV's credentials (access.ts), HTTP Basic with a
   * personal access token as the password, or a bearer token; OPTIONS goes without.
   */
  auth: 'public' | 'access' | 'admin' | 'cookie' | 'dav';
  /**
   * A per-address limit on top of the global one: password (a hash per call), signup, refresh,
   * breach-check (a request to the range API per call); or
   * unlimited for probes and scrapes that come from one address many times a minute.
   */
  limit?: 'password' | 'signup' | 'refresh' | 'breach-check' | 'unlimited';
  /** The handler hashes a password: refused with 503 at once while the hasher's queue is full. */
  hashesPassword?: true;
  /** Per-account failure counting and lockout, keyed on the body's username. */
  loginLockout?: true;
  /**
   * The role on the note named by the `noteID` parameter that the route needs: `owner`, or a
   * member's `editor` (saves, restores) or `viewer` (reads). Settles whose note the caller acts on
   * (members/note-access.ts); a member without the role gets 403, a stranger the route's 404.
   */
  note?: 'viewer' | 'editor' | 'owner';
  /** Tokens or account data: Cache-Control: no-store on every answer, errors included. */
  noStore?: true;
  /**
   * `allowed`: a signed-in account that REQUIRE_SECOND_FACTOR sends to enrolment may still call
   * this route (setting up the factor, GET /auth/me, logout). Every other route that takes
   * credentials answers such an account 403 mfa_enrolment_required (enrolment.ts).
   */
  enrolment?: 'allowed';
}

declare module 'fastify' {
  interface FastifyContextConfig {
    policy?: RoutePolicy;
  }
}

/** Routes hidden from the document (probes, the docs page, plugins' own routes) may leave it out. */
const UNDECLARED: RoutePolicy = { auth: 'public' };

/**
 * The route's policy. A documented route must declare one: a forgotten policy stops start-up
 * rather than leaving a route open or unlimited.
 */
export function policyOf(route: RouteOptions): RoutePolicy {
  const declared = route.config?.policy;
  if (declared !== undefined) return declared;
  if (route.schema?.hide === true) return UNDECLARED;
  throw new Error(`route ${[route.method].flat().join(',')} ${route.url} declares no config.policy`);
}
