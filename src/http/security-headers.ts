import fastifyCors from '@fastify/cors';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, onSendHookHandler } from 'fastify';
import type { Config } from '../config.js';
import { trackAllowedMethods } from './method-not-allowed.js';
import { policyOf } from './policy.js';
import { problem, sendProblem } from './problem.js';

/**
 * Headers for a JSON API that no browser should render, frame or sniff. The API docs page
 * (/api/docs) replaces the Content-Security-Policy with its own in its plugin, which runs later.
 */
export function securityHeaders(config: Config): Record<string, string> {
  return {
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'content-security-policy': "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    'x-frame-options': 'DENY',
    'cross-origin-opener-policy': 'same-origin',
    // Only no-cors loads (<img>, <script>) are refused; fetches allowed by CORS are unaffected.
    'cross-origin-resource-policy': 'same-origin',
    // Production runs behind HTTPS (Secure cookies); over plain HTTP browsers ignore it anyway.
    ...(config.production ? { 'strict-transport-security': 'max-age=31536000; includeSubDomains' } : {}),
  };
}

type HeaderList = ReadonlyArray<readonly [string, string]>;

function applyHeaders(headers: HeaderList, reply: FastifyReply, noStore: boolean): void {
  for (const [name, value] of headers) if (!reply.hasHeader(name)) reply.header(name, value);
  if (noStore) reply.header('cache-control', 'no-store');
  reply.removeHeader('x-powered-by');
}

/**
 * Fastify's `frameworkErrors` option: requests refused before routing (a URL that does not decode)
 * get no hooks at all, so by default they would go out as plain JSON without security headers.
 */
export function frameworkErrors(config: Config) {
  const headers = Object.entries(securityHeaders(config));
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    // Refused before routing: nothing says what the path holds, so nothing may keep the answer.
    applyHeaders(headers, reply, true);
    const body = error.code === 'FST_ERR_BAD_URL' ? problem(400, 'Malformed URL', 'bad_url')
      : error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? problem(414, 'URL path segment too long', 'uri_too_long')
      : problem(500, 'Internal Server Error', 'internal_error');
    if (body.status >= 500) request.log.error({ err: error }, 'request failed before routing');
    sendProblem(reply, body);
  };
}

const CORS_ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'If-Match', 'X-CSRF-Token', 'X-Request-Id'];
/** What a cross-origin client must read: new note location, version tag, CSRF token, back-off. */
const CORS_EXPOSED_HEADERS = ['ETag', 'Location', 'Retry-After', 'X-CSRF-Token', 'X-Request-Id'];

/**
 * Security headers on every response, errors and 404s included, and CORS for the configured
 * origins; Cache-Control: no-store where a route's policy asks for it. Register before throttling,
 * so that a 429 carries the CORS headers a browser client needs to read its Retry-After.
 */
export async function registerSecurityHeaders(app: FastifyInstance, config: Config, closing: () => boolean): Promise<void> {
  const headers: HeaderList = Object.entries(securityHeaders(config));
  // Every header a response gets, in one synchronous hook: the request id, the security headers,
  // and Connection: close while shutting down (graceful-close.ts). onSend rather than onRequest:
  // it also runs for replies to requests refused during the onRequest hooks (throttling,
  // authentication), and for the not-found handler.
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('x-request-id', request.id);
    // A path that matches no route may be one that does (a typo of a token route): not kept either.
    applyHeaders(headers, reply, request.is404);
    // HTTP/2 has no Connection header (and closes streams, not connections).
    if (closing() && request.raw.httpVersionMajor < 2) reply.header('connection', 'close');
    done(null, payload);
  });

  const noStore: onSendHookHandler = (_request, reply, payload, done) => {
    reply.header('cache-control', 'no-store');
    done(null, payload);
  };
  app.addHook('onRoute', (route) => {
    if (policyOf(route).noStore === true) route.onSend = [...[route.onSend ?? []].flat(), noStore];
  });

  if (config.corsOrigins.length === 0) return; // same-origin only: OPTIONS is a plain 404
  const allowed = new Set(config.corsOrigins);
  // Each path's own methods, as the routes declare them (the 405 answers use the same list), so a
  // method added to a route is allowed cross-origin without a second list to keep in step.
  const methodsOf = trackAllowedMethods(app);
  const options = {
    // A function, not the list: for an origin not listed the plugin then adds no CORS header at all
    // (not even Allow-Credentials) and its preflight route answers 404.
    origin: (origin: string | undefined, callback: (error: Error | null, allow: boolean) => void) =>
      callback(null, origin !== undefined && allowed.has(origin)),
    credentials: true,
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    maxAge: 600,
    // Its strict mode answers a malformed preflight with text/plain; ours stays problem+json.
    strictPreflight: false,
  };
  await app.register(fastifyCors, {
    // Options per request: only a preflight (OPTIONS) needs the methods, looked up by its path.
    delegator: (request, callback) => {
      if (request.method !== 'OPTIONS') return callback(null, options);
      callback(null, { ...options, methods: methodsOf(request.url.split('?')[0]!) });
    },
  });
}
