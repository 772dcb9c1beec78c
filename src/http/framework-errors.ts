import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import { Errors } from '../errors.js';
import { sendError } from './problem.js';
import { applyHeaders, securityHeaders } from './security-headers.js';

/**
 * Fastify's `frameworkErrors` option: requests refused before routing (a URL that does not decode)
 * get no hooks at all, so by default they would go out as plain JSON without security headers.
 */
export function frameworkErrors(config: Config) {
  const headers = Object.entries(securityHeaders(config));
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    // Refused before routing: nothing says what the path holds, so nothing may keep the answer.
    applyHeaders(headers, reply, true);
    const refusal =
      error.code === 'FST_ERR_BAD_URL'
        ? Errors.badUrl()
        : error.code === 'FST_ERR_MAX_PARAM_LENGTH'
          ? Errors.uriTooLong()
          : Errors.internal();
    if (refusal.status >= 500) request.log.error({ err: error }, 'request failed before routing');
    sendError(reply, refusal);
  };
}
