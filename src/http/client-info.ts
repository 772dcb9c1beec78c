import type { FastifyRequest } from 'fastify';

/** Where a request came from: recorded with audit events and with each refresh token. */
export interface ClientInfo {
  userAgent: string | undefined;
  ip: string | undefined;
}

export const clientInfo = (request: FastifyRequest): ClientInfo => ({
  userAgent: request.headers['user-agent'],
  ip: request.ip,
});
