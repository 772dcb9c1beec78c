import fastifyCors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';
import { trackAllowedMethods } from './method-not-allowed.js';

const CORS_ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'If-Match', 'X-CSRF-Token', 'X-Request-Id'];
/** What a cross-origin client must read: new note location, version tag, CSRF token, back-off. */
const CORS_EXPOSED_HEADERS = ['ETag', 'Location', 'Retry-After', 'X-CSRF-Token', 'X-Request-Id', 'X-Total-Count'];

/**
 * CORS for the configured origins (CORS_ORIGINS), answered before any route's policy: a preflight
 * carries no credentials, and a refusal (a 429) must carry the headers a browser needs to read it.
 */
export async function registerCors(app: FastifyInstance, config: Config): Promise<void> {
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
