import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import { problem, sendProblem } from './problem.js';
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
    const body =
      error.code === 'FST_ERR_BAD_URL'
        ? problem(400, 'Malformed URL', 'bad_url')
        : error.code === 'FST_ERR_MAX_PARAM_LENGTH'
          ? problem(414, 'URL path segment too long', 'uri_too_long')
          : problem(500, 'Internal Server Error', 'internal_error');
    if (body.status >= 500) request.log.error({ err: error }, 'request failed before routing');
    sendProblem(reply, body);
  };
}
