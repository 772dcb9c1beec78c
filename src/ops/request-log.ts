import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** An incoming X-Request-Id is kept when it is a plain token, so traces join up across services. */
export function requestId(header: string | string[] | undefined): string {
  return typeof header === 'string' && REQUEST_ID.test(header) ? header : randomUUID();
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
      route: request.routeOptions.url ?? 'unmatched',
      status,
      durationMs: Math.round(reply.elapsedTime * 100) / 100,
      userId: request.claims?.sub,
      ip: request.ip,
    };
    if (status >= 500) request.log.error(line, 'request');
    else request.log.info(line, 'request');
  });
}
