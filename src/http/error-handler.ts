import type { ErrorObject } from 'ajv';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable, isStorageFull, type StorageHealth } from '../db/availability.js';
import { AppError, Errors, StepFailure } from '../errors.js';
import { discardBody } from './discard-body.js';
import { firstFailure } from '../shared/validation/schema-rules.js';
import { trackAllowedMethods } from './method-not-allowed.js';
import { sendError } from './problem.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The spec's message for an unexpected failure of this route (e.g. "Failed to create user"). */
    failureDetail?: string;
    /** What a body that fails the route schema means here; gets the validator's own words. */
    invalidBody?: (reason: string) => AppError;
  }
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PROPFIND', 'REPORT']);

/** Path parameters name what they identify; a malformed one gets the matching message. */
const PARAM_ERRORS: Record<string, () => AppError> = {
  noteID: Errors.invalidNoteId,
  versionID: Errors.invalidVersionId,
  sessionID: Errors.invalidSessionId,
  id: Errors.resourceIdMissing,
};

/** The one place where errors become HTTP answers. Registered before the routes (it watches them being added). */
export function registerErrorHandling(app: FastifyInstance, storage?: StorageHealth): void {
  if (storage !== undefined) {
    // A write that succeeds shows the space is back (/readyz turns 200 again).
    app.addHook('onResponse', (request, reply, done) => {
      if (storage.full && !SAFE_METHODS.has(request.method) && reply.statusCode < 400) storage.markWritten();
      done();
    });
  }
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const known = toAppError(error, request);
    if (known !== undefined) {
      if (known.status >= 500) request.log.error({ err: error }, 'request failed');
      const send = () => sendError(reply, known);
      // A body refused before it was read (over the route's limit): Fastify answers it with
      // Connection: close, and closing while the client still sends resets the connection before
      // the client reads the answer. So the rest is read and thrown away first, within a bound.
      // A route that reads its own body (POST /import) refuses it as a 413 from the handler, where
      // Fastify sets no Connection: close: the same then, or the half-read body stalls the socket.
      if (
        (known.status === 413 && !request.raw.complete) ||
        String(reply.getHeader('connection')).toLowerCase() === 'close'
      ) {
        reply.header('connection', 'close');
        return discardBody(request.raw, request.routeOptions.bodyLimit ?? 0).then(send);
      }
      return send();
    }
    const step = error instanceof StepFailure ? error : undefined;
    if (isStorageFull(step?.cause ?? error)) {
      storage?.markFull();
      request.log.error(
        { err: step?.cause ?? error },
        'storage full: the database cannot grow; writes fail until space is freed',
      );
      return sendError(reply, Errors.storageFull());
    }
    if (isDatabaseUnavailable(step?.cause ?? error)) {
      if (storage !== undefined) storage.errors.unavailable += 1;
      request.log.error({ err: error }, 'database unavailable');
      return sendError(reply, Errors.databaseUnavailable());
    }
    request.log.error({ err: error }, 'unhandled error');
    const detail = step?.detail ?? request.routeOptions.config?.failureDetail ?? 'Internal Server Error';
    return sendError(reply, Errors.internal(detail));
  });

  const allowedMethods = trackAllowedMethods(app);
  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0]!;
    const allowed = allowedMethods(path);
    if (allowed.length > 0) return sendError(reply, Errors.methodNotAllowed(request.method, allowed));
    return sendError(reply, Errors.routeNotFound(request.method, path));
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
      return Errors.bodyTooLarge();
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return Errors.unsupportedMediaType('Unsupported content type: send application/json');
    case 'FST_CSRF_MISSING_SECRET':
    case 'FST_CSRF_INVALID_TOKEN':
      return Errors.invalidCsrf();
  }
  // JSON.parse failures surface as SyntaxError with a 400 status from the body parser.
  const status = error.statusCode;
  if (status !== undefined && status >= 400 && status < 500) {
    return Errors.requestRefused(status);
  }
  return undefined;
}

/** `if-match` → `If-Match`: header names as people write them. */
const headerName = (name: string) =>
  name.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase());

/**
 * A request that fails its route schema (validator.ts), answered in the contract's words
 * (schema-rules.ts says what failed): a path parameter by what it names, a query parameter by its
 * name (`invalid_query`), a header by its name, a body by the route's `invalidBody` or, without
 * one, "Invalid request body" for a wrong shape and the rule itself for an explained rule.
 */
function validationError(error: FastifyError, request: FastifyRequest): AppError {
  const errors = (error.validation ?? []) as unknown as ErrorObject[];
  if (errors.length === 0) return Errors.invalidBody();
  const failure = firstFailure(errors);
  switch (error.validationContext) {
    case 'params':
      return (PARAM_ERRORS[failure.path] ?? Errors.resourceIdMissing)();
    case 'querystring': {
      if (failure.keyword === 'additionalProperties')
        return Errors.invalidQuery(`Unknown query parameter "${failure.path}"`);
      // A parameter given twice arrives as an array.
      if (Array.isArray(failure.data) && failure.path !== '')
        return Errors.invalidQuery(`Query parameter "${failure.path}" must be given once`);
      return Errors.invalidQuery(`Query parameter "${failure.path}" ${failure.rule}`);
    }
    case 'headers':
      return Errors.validation(`${headerName(failure.path)} ${failure.rule}`);
    default: {
      // A rule explained for the whole body reads on its own ("give exactly one of ...").
      const reason =
        failure.path === ''
          ? failure.explained
            ? failure.rule
            : `body ${failure.rule}`
          : `${failure.path} ${failure.rule}`;
      const custom = request.routeOptions.config?.invalidBody?.(reason);
      if (custom !== undefined) return custom;
      return failure.explained ? Errors.validation(reason[0]!.toUpperCase() + reason.slice(1)) : Errors.invalidBody();
    }
  }
}
