import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** An incoming X-Request-Id is kept when it is a plain token, so traces join up across services. */
export function requestId(header: string | string[] | undefined): string {
  return typeof header === 'string' && REQUEST_ID.test(header) ? header : randomUUID();
}

/**
 * The matched route pattern for logs and metric labels ("unmatched" for a 404 without a route).
 * Fastify registers a prefixed '/' route as both /api/notes and /api/notes/ (and /auth/owner is
 * declared twice); they are one route, so the trailing slash is dropped rather than giving every
 * such route two label values.
 */
export function routePattern(request: FastifyRequest): string {
  const url = request.routeOptions.url;
  if (url === undefined) return 'unmatched';
  return url.length > 1 && url.endsWith('/') ? url.slice(0, -1) : url;
}

/** One structured line per request (Fastify's own two lines are turned off in app.ts). */
export function registerRequestLog(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  app.addHook('onResponse', async (request, reply) => {
    const status = reply.statusCode;
    const line = {
      method: request.method,
      route: routePattern(request),
      status,
      durationMs: Math.round(reply.elapsedTime * 100) / 100,
      userId: request.claims?.sub,
      ip: request.ip,
    };
    if (status >= 500) request.log.error(line, 'request');
    else request.log.info(line, 'request');
  });
}
