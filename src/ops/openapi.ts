import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, RouteOptions } from 'fastify';
import { policyOf, type RoutePolicy } from '../http/policy.js';
import { ProblemSchema, Query } from '../http/schemas.js';
import { completeResponses, derivedOperationId, documentedPath, type RouteDocs } from './openapi-document.js';
import { VELLUM_LOGO_SVG } from './logo.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** What the OpenAPI document says of this route beyond its schema (see openapi-document.ts). */
    docs?: RouteDocs;
  }
}

const NoQuery = Query({});

/** How each auth class of a route's policy (policy.ts) is shown. */
const SECURITY: Record<RoutePolicy['auth'], Array<Record<string, string[]>>> = {
  public: [],
  access: [{ bearer: [] }],
  admin: [{ bearer: [] }],
  cookie: [{ refreshCookie: [] }],
  // WebDAV is not in the document (its routes are hidden); docs/features.md, "Use Vellum from other apps".
  dav: [{ bearer: [] }],
};

const DESCRIPTIONS: Record<number, string> = {
  400: 'Bad request: malformed input, with a message saying what to fix',
  401: 'Missing or invalid credentials',
  403: 'Forbidden (not an administrator, a role on a shared note that is not enough, a personal access token without the scope, CSRF or origin check failed)',
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
function errorStatuses(route: RouteOptions, policy: RoutePolicy): number[] {
  const { auth } = policy;
  const statuses = [400, 429, 500, 503];
  if (auth !== 'public') statuses.push(401);
  // A member whose role on the note is not enough (note-access.ts); no role is enough for an owner route.
  if (auth === 'admin' || auth === 'cookie' || (policy.note !== undefined && policy.note !== 'viewer'))
    statuses.push(403);
  // A personal access token without the scope the route needs (insufficient_scope; http/access.ts).
  if (auth === 'access' && !route.url.startsWith('/api/auth')) statuses.push(403);
  // A path parameter names something that may not exist (or not be the caller's).
  if (route.url.includes(':')) statuses.push(404);
  if (['POST', 'PUT', 'PATCH', 'DELETE'].includes(String(route.method))) statuses.push(413, 415);
  statuses.push(...(route.config?.docs?.errors ?? []));
  return [...new Set(statuses)].sort();
}

/**
 * OpenAPI 3.1 from the route schemas at /api/openapi.json, and Swagger UI at /api/docs. Must be
 * registered before the routes: it completes each /api route's schema as the route is added.
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  /** Per documented operation (`GET /api/notes/{noteID}`): what the route declared for the document. */
  const operations = new Map<string, { docs: RouteDocs | undefined; optionalBody: boolean; noStore: boolean }>();
  /** Routes declared twice, as `/owner/` and `/owner`: the document shows the second form only. */
  const slashTwins = new Set<string>();
  app.addHook('onRoute', (route) => {
    if (route.routePath.length > 1 && route.routePath.endsWith('/')) slashTwins.add(route.url);
    if (!route.url.startsWith('/api/') || route.url.startsWith('/api/docs') || route.schema?.hide === true) return;
    const policy = policyOf(route);
    const { auth, noStore } = policy;
    for (const method of [route.method].flat()) {
      const body = route.schema?.body as { '~optional'?: boolean } | undefined;
      operations.set(`${method.toLowerCase()} ${documentedPath(route.url)}`, {
        docs: route.config?.docs,
        optionalBody: body?.['~optional'] === true,
        noStore: noStore === true,
      });
    }
    const schema = (route.schema ??= {});
    // A documented operation takes exactly the query parameters it documents: none, unless it says.
    schema.querystring ??= NoQuery;
    const response = (schema.response ??= {}) as Record<string, unknown>;
    for (const status of errorStatuses(route, policy)) {
      response[status] ??= {
        description: DESCRIPTIONS[status],
        content: { 'application/problem+json': { schema: ProblemSchema } },
      };
    }
    for (const status of [201, 204]) {
      if (response[status] === undefined && expectsEmpty(route, status))
        response[status] = { type: 'null', description: 'No content' };
    }
    schema.security ??= SECURITY[auth];
  });

  await app.register(fastifySwagger, {
    // Shared schemas keep their $id (User, Note, ...) as their name under components.schemas
    // instead of the plugin's positional def-0, def-1, which change whenever a schema is added.
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
    // One documented form per path: `/api/auth/owner/` and `/api/auth/owner` are one route.
    transform: ({ schema, url }) => {
      const trimmed = url.length > 1 ? url.replace(/\/+$/, '') : url;
      const hide = schema?.hide === true || slashTwins.has(url);
      if (schema === undefined || schema === null) return { schema, url: trimmed };
      return { schema: { ...schema, hide }, url: trimmed };
    },
    transformObject: (documentObject) => {
      const document = (
        'openapiObject' in documentObject ? documentObject.openapiObject : documentObject.swaggerObject
      ) as {
        paths?: Record<
          string,
          Record<
            string,
            {
              operationId?: string;
              summary?: string;
              description?: string;
              responses?: Record<string, unknown>;
              requestBody?: { required?: boolean };
            }
          >
        >;
      };
      for (const [path, item] of Object.entries(document.paths ?? {})) {
        for (const [method, operation] of Object.entries(item)) {
          const declared = operations.get(`${method} ${path}`);
          operation.operationId ??= derivedOperationId(method, path);
          operation.summary ??= operation.description ?? `${method.toUpperCase()} ${path}`;
          if (operation.responses !== undefined)
            completeResponses(operation.responses, declared?.docs, declared?.noStore === true);
          if (declared?.optionalBody === true && operation.requestBody !== undefined)
            operation.requestBody.required = false;
        }
      }
      return document as never;
    },
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Vellum API',
        version: '1.0.0',
        description:
          'Accounts with token authentication, administrator functions and notes that keep every version. ' +
          'Errors are RFC 9457 application/problem+json. Log in for a 15-minute access token (send it as ' +
          '`Authorization: Bearer`); the refresh cookie, with the CSRF token from GET /api/auth/cookie/csrf, gets a new one.',
        license: { name: 'Proprietary', identifier: 'LicenseRef-Vellum' },
      },
      servers: [{ url: '/', description: 'this Vellum instance' }],
      tags: [
        { name: 'auth', description: "Sign up, log in, tokens and cookies, the caller's own account and sessions" },
        { name: 'admin', description: 'Administrators only: every account and the audit trail' },
        { name: 'notes', description: "The caller's notes and the history of their versions" },
        {
          name: 'search',
          description: "Full-text search through the caller's notes, optionally through their history",
        },
        { name: 'trash', description: 'Deleted notes, restorable until they are purged' },
        { name: 'export', description: 'Every note with its whole history out as JSON or Markdown, and back in' },
      ],
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description: 'access token from login or refresh (15 minutes)',
          },
          refreshCookie: {
            type: 'apiKey',
            in: 'cookie',
            name: 'app.refresh_token',
            description:
              'refresh token cookie (7 days, single use); POST also needs X-CSRF-Token from GET /api/auth/cookie/csrf',
          },
        },
      },
    },
  });
  await app.register(fastifySwaggerUi, {
    routePrefix: '/api/docs',
    staticCSP: true,
    logo: { type: 'image/svg+xml', content: Buffer.from(VELLUM_LOGO_SVG), href: '/api/docs', target: '_self' },
    theme: {
      title: 'Vellum API',
      favicon: [
        {
          filename: 'favicon.svg',
          rel: 'icon',
          sizes: 'any',
          type: 'image/svg+xml',
          content: Buffer.from(VELLUM_LOGO_SVG),
        },
      ],
    },
  });
  app.get('/api/openapi.json', { schema: { hide: true }, config: { policy: { auth: 'public' } } }, async () =>
    app.swagger(),
  );
}

/** DELETE answers 204; other routes that do say so in config.docs. */
function expectsEmpty(route: RouteOptions, status: number): boolean {
  return status === 204 && (String(route.method) === 'DELETE' || route.config?.docs?.noContent === true);
}
