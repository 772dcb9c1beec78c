import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest, FastifyServerOptions } from 'fastify';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** An incoming X-Request-Id is kept when it is a plain token, so traces join up across services. */
export function requestId(header: string | string[] | undefined): string {
  return typeof header === 'string' && REQUEST_ID.test(header) ? header : randomUUID();
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's label in logs and metrics (see routeLabel), set once when the route is added. */
    routeLabel?: string;
  }
}

/**
 * The matched route pattern for logs and metric labels ("unmatched" for a 404 without a route).
 * Fastify registers a prefixed '/' route as both /api/notes and /api/notes/ (and /auth/owner is
 * declared twice); they are one route, so the trailing slash is dropped rather than giving every
 * such route two label values.
 */
export function routeLabel(url: string | undefined): string {
  if (url === undefined) return 'unmatched';
  return url.length > 1 && url.endsWith('/') ? url.slice(0, -1) : url;
}

/** The request's route label, computed when the route was added (labelRoutes). */
export function routePattern(request: FastifyRequest): string {
  const { config, url } = request.routeOptions;
  return config.routeLabel ?? routeLabel(url);
}

/**
 * Gives every route its label at start-up, so requests never recompute it. Must be registered
 * before the routes.
 */
export function labelRoutes(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    route.config = { ...route.config, routeLabel: routeLabel(route.url) };
  });
}

/**
 * Fastify makes a child logger per request, bound to its id; making it (and serialising the
 * binding) cost more than most requests ever log. This one is made only if the request logs
 * something besides its request line, which carries the id itself.
 */
type Method = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

class LazyRequestLogger {
  #child: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Record<string, unknown>,
    private readonly options: object,
  ) {}

  private get log(): FastifyBaseLogger {
    return (this.#child ??= this.parent.child(this.bindings, this.options));
  }

  private call(method: Method, args: unknown[]): void {
    (this.log[method] as (...a: unknown[]) => void)(...args);
  }

  get level(): string {
    return this.#child?.level ?? this.parent.level;
  }

  set level(level: string) {
    this.log.level = level;
  }

  fatal(...args: unknown[]) { this.call('fatal', args); }
  error(...args: unknown[]) { this.call('error', args); }
  warn(...args: unknown[]) { this.call('warn', args); }
  info(...args: unknown[]) { this.call('info', args); }
  debug(...args: unknown[]) { this.call('debug', args); }
  trace(...args: unknown[]) { this.call('trace', args); }
  silent(...args: unknown[]) { this.call('silent', args); }
  child(bindings: Record<string, unknown>, options?: object) { return this.log.child(bindings, options); }
}

export const lazyChildLogger: NonNullable<FastifyServerOptions['childLoggerFactory']> = (logger, bindings, options) =>
  new LazyRequestLogger(logger, bindings as Record<string, unknown>, options) as unknown as FastifyBaseLogger;

/**
 * One structured line per request (Fastify's own two lines are turned off in app.ts). The line's
 * fields are fixed and hold no secret, so it is written directly to the logger's stream as the
 * same JSON pino would write (level, time, the logger's bindings, the fields, msg), without pino's
 * generic path — serialisers, redaction, a per-request object — which was a sixth of a note read's
 * CPU (BENCHMARKS.md, "Issue #28"). A logger that is not pino's (tests may give none) gets the line
 * through its own methods.
 */
export function registerRequestLog(app: FastifyInstance): void {
  const log = app.log.child({}, { redact: [] });
  const write = directWriter(log);
  app.addHook('onResponse', (request, reply, done) => {
    const status = reply.statusCode;
    const error = status >= 500;
    const durationMs = Math.round(reply.elapsedTime * 100) / 100;
    const userId = request.claims?.sub;
    if (write !== undefined) {
      if ((log as unknown as pino.Logger).isLevelEnabled(error ? 'error' : 'info')) {
        write(`{"level":${error ? 50 : 30},"time":${Date.now()}`, `,"reqId":${JSON.stringify(request.id)},"method":${JSON.stringify(request.method)},"route":${JSON.stringify(routePattern(request))},"status":${status},"durationMs":${durationMs}${userId === undefined ? '' : `,"userId":${JSON.stringify(userId)}`},"ip":${JSON.stringify(request.ip)},"msg":"request"}\n`);
      }
    } else {
      const line = { reqId: request.id, method: request.method, route: routePattern(request), status, durationMs, userId, ip: request.ip };
      if (error) log.error(line, 'request');
      else log.info(line, 'request');
    }
    done();
  });
}

/**
 * Writes `head` + the logger's bindings + `tail` to a pino logger's stream, when `log` is one
 * with the default line format; otherwise undefined.
 */
function directWriter(log: FastifyBaseLogger): ((head: string, tail: string) => void) | undefined {
  const internals = log as unknown as Record<symbol, unknown>;
  const stream = internals[pino.symbols.streamSym] as { write?: (line: string) => unknown } | undefined;
  const bindings = internals[pino.symbols.chindingsSym];
  if (typeof stream?.write !== 'function' || typeof bindings !== 'string') return undefined;
  // Custom formatters, message key, mixin or time function would change the line: keep pino's own path then.
  const formatters = internals[pino.symbols.formattersSym] as { level?: (label: string, n: number) => unknown; log?: (o: object) => unknown } | undefined;
  const probe = {};
  const levelShape = JSON.stringify(formatters?.level?.('info', 30));
  if (internals[pino.symbols.messageKeySym] !== 'msg' || internals[pino.symbols.timeSym] !== pino.stdTimeFunctions.epochTime
    || internals[pino.symbols.mixinSym] !== undefined || levelShape !== '{"level":30}' || formatters?.log?.(probe) !== probe) return undefined;
  return (head, tail) => void stream.write!(head + bindings + tail);
}
