import type { FastifyInstance, RouteOptions } from 'fastify';
import { policyOf, type RoutePolicy } from './policy.js';

/** The lifecycle stages at which a policy adds hooks to a route. */
type Stage = 'onRequest' | 'preHandler' | 'onSend';
type HookOf<S extends Stage> = Extract<NonNullable<RouteOptions[S]>, unknown[]>[number];

/** The hooks one layer adds to one route, per stage. */
export type PolicyHooks = { [S in Stage]?: Array<HookOf<S>> };

/**
 * One layer of policy: given a route's policy, the hooks it needs, or undefined when the policy asks
 * nothing of this layer. `instance` is the scope the route is declared in (the cookie layer looks
 * for the cookie plugin there). A layer may throw to stop start-up on a route it cannot serve.
 */
export type PolicyLayer = (
  policy: RoutePolicy,
  route: RouteOptions,
  instance: FastifyInstance,
) => PolicyHooks | undefined;

/**
 * The one order in which the layers' hooks run, within each stage, ahead of the route's own hooks
 * of that stage (the refresh route's origin and CSRF checks run after all of these).
 */
export const POLICY_ORDER = [
  // Per-address limits first: a refused request costs a counter and nothing more (no hash queue,
  // no token check, no body), and a flood of guessed tokens is throttled like any other.
  'limits',
  // While the password hasher's queue is full, 503 at once, before the body is read; after the
  // limits, so a throttled client is told to slow down rather than to retry in a second.
  'shedding',
  // A cookie route's cookies, parsed (cheap, synchronous) for the route's own CSRF and refresh
  // checks. Cookie routes and bearer routes are distinct, so this never meets `access`.
  'cookies',
  // Bearer routes: a valid access token (admin: the account as it is now, a database read).
  'access',
  // REQUIRE_SECOND_FACTOR: a covered account without a factor reaches only the routes that allow
  // enrolment (a database read per call, only when the setting is on); right after the caller is known.
  'enrolment',
  // preHandler: on routes naming a note, whose note the caller acts on and whether their role
  // (owner, editor, viewer) allows the route (members/note-access.ts).
  'note',
  // preHandler and onSend: the per-account login lockout, on the validated body right before the
  // password check, and its count cleared before a successful answer leaves.
  'lockout',
  // onSend: Cache-Control: no-store on every answer of a route that hands out tokens or account
  // data, refusals by the steps above included.
  'noStore',
] as const;

export type PolicyStep = (typeof POLICY_ORDER)[number];

/** A step left out (limits and lockout with RATE_LIMIT=off) adds nothing. */
export type PolicyLayers = Partial<Record<PolicyStep, PolicyLayer>>;

/**
 * Reads each route's config.policy as the route is added and attaches the layers' hooks in
 * POLICY_ORDER, whatever order the layers were built in. Register before the routes whose policy
 * it enforces: a route added earlier would get none of its hooks.
 */
export function registerRoutePolicy(app: FastifyInstance, layers: PolicyLayers): void {
  const ordered = POLICY_ORDER.flatMap((step) => layers[step] ?? []);
  app.addHook('onRoute', function attachPolicy(route) {
    const policy = policyOf(route);
    const onRequest: Array<HookOf<'onRequest'>> = [];
    const preHandler: Array<HookOf<'preHandler'>> = [];
    const onSend: Array<HookOf<'onSend'>> = [];
    for (const layer of ordered) {
      const hooks = layer(policy, route, this);
      onRequest.push(...(hooks?.onRequest ?? []));
      preHandler.push(...(hooks?.preHandler ?? []));
      onSend.push(...(hooks?.onSend ?? []));
    }
    if (onRequest.length > 0) route.onRequest = [...onRequest, ...toArray(route.onRequest)];
    if (preHandler.length > 0) route.preHandler = [...preHandler, ...toArray(route.preHandler)];
    if (onSend.length > 0) route.onSend = [...onSend, ...toArray(route.onSend)];
  });
}

function toArray<T>(value: T | T[] | undefined): T[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}
