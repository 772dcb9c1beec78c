import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable } from '../db/availability.js';
import { AppError, Errors, StepFailure } from '../errors.js';
import { discardBody } from './discard-body.js';
import { trackAllowedMethods } from './method-not-allowed.js';
import { problem, sendProblem } from './problem.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The spec's message for an unexpected failure of this route (e.g. "Failed to create user"). */
    failureDetail?: string;
    /** What a body that fails the route schema means here; gets the validator's own words. */
    invalidBody?: (reason: string) => AppError;
  }
}

/** Path parameters name what they identify; a malformed one gets the matching message. */
const PARAM_ERRORS: Record<string, () => AppError> = {
  noteID: Errors.invalidNoteId,
  versionID: Errors.invalidVersionId,
  sessionID: Errors.invalidSessionId,
  id: Errors.resourceIdMissing,
};

/** The one place where errors become HTTP answers. Registered before the routes (it watches them being added). */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const known = toAppError(error, request);
    if (known !== undefined) {
      if (known.status >= 500) request.log.error({ err: error }, 'request failed');
      const send = () => sendProblem(reply, problem(known.status, known.detail, known.code, known.extensions), known.headers);
      // A body refused before it was read (over the route's limit): Fastify answers it with
      // Connection: close, and closing while the client still sends resets the connection before
      // the client reads the answer. So the rest is read and thrown away first, within a bound.
      // A route that reads its own body (POST /import) refuses it as a 413 from the handler, where
      // Fastify sets no Connection: close: the same then, or the half-read body stalls the socket.
      if ((known.status === 413 && !request.raw.complete) || String(reply.getHeader('connection')).toLowerCase() === 'close') {
        reply.header('connection', 'close');
        return discardBody(request.raw, request.routeOptions.bodyLimit ?? 0).then(send);
      }
      return send();
    }
    const step = error instanceof StepFailure ? error : undefined;
    if (isDatabaseUnavailable(step?.cause ?? error)) {
      request.log.error({ err: error }, 'database unavailable');
      return sendProblem(reply, problem(503, 'Service temporarily unavailable', 'database_unavailable'), { 'retry-after': '5' });
    }
    request.log.error({ err: error }, 'unhandled error');
    const detail = step?.detail ?? request.routeOptions.config?.failureDetail ?? 'Internal Server Error';
    return sendProblem(reply, problem(500, detail, 'internal_error'));
  });

  const allowedMethods = trackAllowedMethods(app);
  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0]!;
    const allowed = allowedMethods(path);
    if (allowed.length > 0) {
      return sendProblem(reply, problem(405, `Method ${request.method} is not allowed here; use ${allowed.join(', ')}`, 'method_not_allowed'), {
        allow: allowed.join(', '),
      });
    }
    return sendProblem(reply, problem(404, `No route for ${request.method} ${path}`, 'route_not_found'));
  });
}

function toAppError(error: FastifyError, request: FastifyRequest): AppError | undefined {
  if (error instanceof AppError) return error;
  if (error.validation !== undefined) return validationError(error, request);
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return Errors.invalidBody();
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError(413, 'body_too_large', 'Request body is too large');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError(415, 'unsupported_media_type', 'Unsupported content type: send application/json');
    case 'FST_CSRF_MISSING_SECRET':
    case 'FST_CSRF_INVALID_TOKEN':
      return Errors.invalidCsrf();
  }
  // JSON.parse failures surface as SyntaxError with a 400 status from the body parser.
  const status = error.statusCode;
  if (status !== undefined && status >= 400 && status < 500) {
    return new AppError(status, 'bad_request', status === 400 ? 'Bad request' : `Request refused (${status})`);
  }
  return undefined;
}

function validationError(error: FastifyError, request: FastifyRequest): AppError {
  const first = error.validation?.[0];
  switch (error.validationContext) {
    case 'params': {
      const name = first?.instancePath.replace(/^\//, '') || String(first?.params?.missingProperty ?? '');
      return (PARAM_ERRORS[name] ?? Errors.resourceIdMissing)();
    }
    case 'querystring': {
      const name = first?.instancePath.replace(/^\//, '') || 'query';
      return Errors.invalidQuery(`Invalid query parameter "${name}"`);
    }
    default:
      const field = first?.instancePath.replace(/^\//, '').replaceAll('/', '.') || 'body';
      return request.routeOptions.config?.invalidBody?.(`${field} ${first?.message ?? 'is invalid'}`) ?? Errors.invalidBody();
  }
}
