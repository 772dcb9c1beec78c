import { randomUUID } from 'node:crypto';
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

  fatal(...args: unknown[]) {
    this.call('fatal', args);
  }
  error(...args: unknown[]) {
    this.call('error', args);
  }
  warn(...args: unknown[]) {
    this.call('warn', args);
  }
  info(...args: unknown[]) {
    this.call('info', args);
  }
  debug(...args: unknown[]) {
    this.call('debug', args);
  }
  trace(...args: unknown[]) {
    this.call('trace', args);
  }
  silent(...args: unknown[]) {
    this.call('silent', args);
  }
  child(bindings: Record<string, unknown>, options?: object) {
    return this.log.child(bindings, options);
  }
}

export const lazyChildLogger: NonNullable<FastifyServerOptions['childLoggerFactory']> = (logger, bindings, options) =>
  new LazyRequestLogger(logger, bindings as Record<string, unknown>, options) as unknown as FastifyBaseLogger;

/**
 * One structured line per request (Fastify's own two lines are turned off in app.ts), written by a
 * logger made once: the line's fields are fixed and hold no secret, so it skips the wildcard
 * redaction that the app's logger applies to everything else (logger.ts).
 */
export function registerRequestLog(app: FastifyInstance): void {
  const log = app.log.child({}, { redact: [] });
  app.addHook('onResponse', (request, reply, done) => {
    const status = reply.statusCode;
    const line = {
      reqId: request.id,
      method: request.method,
      route: routePattern(request),
      status,
      durationMs: Math.round(reply.elapsedTime * 100) / 100,
      userId: request.claims?.sub,
      ip: request.ip,
    };
    // A readiness probe's 503 is its answer (draining, the database away), not a failure: during a
    // drain a balancer asks every second, and each was an error line.
    if (status >= 500 && line.route !== '/readyz') log.error(line, 'request');
    else log.info(line, 'request');
    done();
  });
}
