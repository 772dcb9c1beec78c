import type { FastifyRequest } from 'fastify';
import type { ClientInfo } from '../shared/client-info.js';

export type { ClientInfo } from '../shared/client-info.js';

export const clientInfo = (request: FastifyRequest): ClientInfo => ({
  userAgent: request.headers['user-agent'],
  ip: request.ip,
});
