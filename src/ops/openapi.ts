import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, RouteOptions } from 'fastify';
import { ProblemSchema } from '../http/schemas.js';

type Auth = 'public' | 'access' | 'admin' | 'cookie';

/** Who may call a route, by its path; the route files hold the hooks that enforce it. */
export function authOf(url: string): Auth {
  if (url === '/api/auth/signup' || url === '/api/auth/login') return 'public';
  if (url.startsWith('/api/auth/admin')) return 'admin';
  if (url.startsWith('/api/auth/cookie')) return 'cookie';
  return 'access';
}

const SECURITY: Record<Auth, Array<Record<string, string[]>>> = {
  public: [],
  access: [{ bearer: [] }],
  admin: [{ bearer: [] }],
  cookie: [{ refreshCookie: [] }],
};

const DESCRIPTIONS: Record<number, string> = {
  400: 'Bad request: malformed input, with a message saying what to fix',
  401: 'Missing or invalid credentials',
  403: 'Forbidden (not an administrator, CSRF or origin check failed)',
  404: 'Not found (or not yours)',
  409: 'Conflict',
  412: 'Precondition failed: If-Match is stale; the body names the current version',
  413: 'Body too large',
  415: 'Unsupported content type',
  429: 'Too many requests; see Retry-After',
  500: 'Internal error; the body never carries internals',
  503: 'Temporarily unavailable (database down or server busy); see Retry-After',
};

/** The error statuses a route can answer with, so the document lists every one. */
function errorStatuses(route: RouteOptions): number[] {
  const url = route.url;
  const method = String(route.method);
  const statuses = [400, 429, 500, 503];
  const auth = authOf(url);
  // Login is public but answers 401 "Invalid credentials"; the document used to omit it.
  if (auth !== 'public' || url === '/api/auth/login') statuses.push(401);
  if (auth === 'admin' || auth === 'cookie') statuses.push(403);
  if (url.includes(':') || url === '/api/auth/me' || url.startsWith('/api/auth/owner')) statuses.push(404);
  if (url === '/api/auth/signup') statuses.push(409);
  if (url.endsWith('/versions') && method === 'POST') statuses.push(412);
  if (['POST', 'PUT', 'PATCH', 'DELETE'].includes(method)) statuses.push(413, 415);
  return statuses.sort();
}

/**
 * OpenAPI 3.1 from the route schemas at /api/openapi.json, and Swagger UI at /api/docs. Must be
 * registered before the routes: it completes each /api route's schema as the route is added.
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/api/') || route.url.startsWith('/api/docs') || route.schema?.hide === true) return;
    const schema = (route.schema ??= {});
    const response = (schema.response ??= {}) as Record<string, unknown>;
    for (const status of errorStatuses(route)) {
      response[status] ??= {
        description: DESCRIPTIONS[status],
        content: { 'application/problem+json': { schema: ProblemSchema } },
      };
    }
    for (const status of [201, 204]) {
      if (response[status] === undefined && expectsEmpty(route, status)) response[status] = { type: 'null', description: 'No content' };
    }
    schema.tags ??= [route.url.startsWith('/api/notes') ? 'notes' : route.url.includes('/admin') ? 'admin' : 'auth'];
    schema.security ??= SECURITY[authOf(route.url)];
  });

  await app.register(fastifySwagger, {
    // Shared schemas keep their $id (User, Note, ...) as their name under components.schemas
    // instead of the plugin's positional def-0, def-1, which change whenever a schema is added.
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Vellum API',
        version: '1.0.0',
        description: 'Accounts with token authentication, administrator functions and versioned notes. '
          + 'Errors are RFC 9457 application/problem+json.',
      },
      tags: [{ name: 'auth' }, { name: 'admin' }, { name: 'notes' }, { name: 'search' }, { name: 'trash' }, { name: 'export' }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'access token from login or refresh (15 minutes)' },
          refreshCookie: {
            type: 'apiKey', in: 'cookie', name: 'app.refresh_token',
            description: 'refresh token cookie (7 days, single use); POST also needs X-CSRF-Token from GET /api/auth/cookie/csrf',
          },
        },
      },
    },
  });
  await app.register(fastifySwaggerUi, { routePrefix: '/api/docs', staticCSP: true });
  app.get('/api/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}

/** Routes that answer 204 declare it here when their own schema does not. */
function expectsEmpty(route: RouteOptions, status: number): boolean {
  if (status !== 204) return false;
  const method = String(route.method);
  return method === 'DELETE' || route.url.endsWith('/logout') || route.url.endsWith('/cookie/csrf')
    || (method === 'POST' && route.url.endsWith('/versions'));
}
