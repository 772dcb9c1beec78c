import fastifyCookie from '@fastify/cookie';
import fastifyCsrf from '@fastify/csrf-protection';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type onRequestHookHandler } from 'fastify';
import { accountRoutes } from './accounts/accounts.routes.js';
import type { AccountServices } from './accounts/accounts.service.js';
import { auditRoutes } from './audit/audit.routes.js';
import { registerAccess } from './http/access.js';
import { policyOf, prepend } from './http/policy.js';
import { findUserById } from './accounts/user.repository.js';
import { CSRF_SECRET_COOKIE, csrfCookieOptions } from './sessions/cookies.js';
import { sessionRoutes } from './sessions/sessions.routes.js';
import type { SessionServices } from './sessions/sessions.service.js';
import { createPasswordHasher, type PasswordHasher } from './passwords/password-hasher.js';
import { policyFromConfig } from './passwords/password-policy.js';
import { createTokenService } from './sessions/tokens.js';
import type { Config } from './config.js';
import type { Database } from './db/database.js';
import { registerErrorHandling } from './http/error-handler.js';
import { registerJsonParser } from './http/json-parser.js';
import { createValidatorCompiler } from './http/validator.js';
import { registerThrottling, type ThrottleTesting } from './http/rate-limit.js';
import { registerHashShedding } from './http/shed.js';
import { frameworkErrors, registerSecurityHeaders } from './http/security-headers.js';
import { clientErrorHandler } from './http/client-error.js';
import { loggerOptions } from './logger.js';
import { notesRoutes } from './notes/notes.routes.js';
import { exportRoutes } from './export/export.routes.js';
import { searchRoutes } from './search/search.routes.js';
import { trashRoutes } from './trash/trash.routes.js';
import { DEFAULT_WEB_ROOT, webRoutes } from './web/web.routes.js';
import { healthRoutes } from './ops/health.routes.js';
import { registerMetrics } from './ops/metrics.js';
import { registerOpenApi } from './ops/openapi.js';
import { registerGracefulClose } from './ops/graceful-close.js';
import { labelRoutes, lazyChildLogger, registerRequestLog, requestId } from './ops/request-log.js';

export interface AppOptions {
  config: Config;
  database: Database;
  /** A ready logger (main shares one with start-up), or false to stay quiet (tests). */
  logger?: FastifyBaseLogger | false;
  hasher?: PasswordHasher;
  /** The built web client (tests point it at a fixture); defaults to dist/public. */
  webRoot?: string;
  /** Tests only: pauses at named steps (SessionServices.checkpoint, AccountServices.checkpoint). */
  checkpoint?: (step: string) => Promise<void>;
  /** Tests only: see ThrottleTesting. */
  throttleTesting?: ThrottleTesting;
}

/** How often Node looks for requests past their time-outs: a time-out may be overrun by this much. */
export const CONNECTIONS_CHECKING_INTERVAL_MS = 1000;

/** The whole application; main.ts and the tests build exactly this. */
export async function buildApp({ config, database, logger, hasher, webRoot, checkpoint, throttleTesting }: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    ...(logger === undefined ? { logger: loggerOptions(config) } : logger === false ? { logger: false } : { loggerInstance: logger }),
    // One hop: the address our own proxy saw. Trusting every hop would let a client pick its
    // address by sending its own X-Forwarded-For, which the proxy only appends to.
    trustProxy: config.trustProxy ? (_address: string, hop: number) => hop === 0 : false,
    bodyLimit: 16 * 1024,
    // Long-running slow uploads tie up sockets; legitimate bodies here are at most a few MiB.
    requestTimeout: config.requestTimeoutSeconds * 1000,
    // Given to Node's server itself: its headers time-out defaults from the request time-out it
    // was created with (5 minutes, before Fastify sets its own), and it checks both only every
    // connectionsCheckingInterval (30 s by default), which let trickled requests live twice as long.
    http: {
      requestTimeout: config.requestTimeoutSeconds * 1000,
      headersTimeout: config.headersTimeoutSeconds * 1000,
      connectionsCheckingInterval: CONNECTIONS_CHECKING_INTERVAL_MS,
    },
    // What Node refuses below Fastify (those time-outs, oversized headers) as problem+json too.
    clientErrorHandler: clientErrorHandler(config),
    connectionTimeout: 60_000,
    keepAliveTimeout: 72_000,
    return503OnClosing: true,
    frameworkErrors: frameworkErrors(config),
    // Fastify's default (100) answers a longer path parameter with 414 before the route's own
    // validation could say "Invalid note ID"; Node's header limit bounds URLs anyway.
    routerOptions: { maxParamLength: 16 * 1024 },
    // One line per request from ops/request-log.ts instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    ...(logger === false ? {} : { childLoggerFactory: lazyChildLogger }),
    genReqId: (request) => requestId(request.headers['x-request-id']),
  }).withTypeProvider<TypeBoxTypeProvider>();
  // Every route part is checked against its schema by one Ajv (http/validator.ts).
  app.setValidatorCompiler(createValidatorCompiler());

  // Every hook here runs on every request: each is synchronous and does only what depends on the
  // request; what does not (route labels, header lists) is worked out here, once.
  labelRoutes(app);
  registerErrorHandling(app);
  registerJsonParser(app);
  registerRequestLog(app);
  const closing = registerGracefulClose(app);
  await registerSecurityHeaders(app, config, closing);
  const tokens = createTokenService(config.jwtSecret);
  const passwordHasher = hasher ?? createPasswordHasher();
  // Each of these adds the hooks that a route's config.policy asks for as the route is added, in
  // front of the route's own; the one registered last runs first: limits, shedding, then access.
  // (The cookie routes below parse their cookies before all of these: a cheap, synchronous step.)
  registerAccess(app, tokens, (userId) => findUserById(database.db, userId));
  registerHashShedding(app, passwordHasher);
  const throttling = await registerThrottling(app, config, throttleTesting);
  await registerOpenApi(app);

  const services: AccountServices & SessionServices = {
    db: database.db,
    tokens,
    hasher: passwordHasher,
    policy: policyFromConfig(config, app.log),
    reuseGraceSeconds: config.refreshReuseGraceSeconds,
    ...(checkpoint === undefined ? {} : { checkpoint }),
    log: app.log,
  };
  registerMetrics(app, { hasher: services.hasher, pool: database.poolStats, redisBreaker: throttling.redisBreaker, token: config.metricsToken });
  await app.register(healthRoutes, { database, draining: closing });

  await app.register(async (auth) => {
    // Cookies are set by some routes below /api/auth and read (with the CSRF check) only by those
    // whose policy is cookie, so no other request parses them or runs the cookie plugin's hooks.
    await auth.register(fastifyCookie, { secret: config.csrfSecret, hook: false });
    await auth.register(fastifyCsrf, {
      cookieKey: CSRF_SECRET_COOKIE,
      cookieOpts: csrfCookieOptions(config),
      getToken: (request) => {
        const value = request.headers['x-csrf-token'];
        return typeof value === 'string' ? value : undefined;
      },
    });
    const parseCookies: onRequestHookHandler = (request, _reply, done) => {
      const header = request.headers.cookie;
      request.cookies = header === undefined ? {} : auth.parseCookie(header);
      done();
    };
    auth.addHook('onRoute', (route) => {
      if (policyOf(route).auth === 'cookie') route.onRequest = prepend(route.onRequest, parseCookies);
    });
    await auth.register(accountRoutes, { config, services });
    await auth.register(sessionRoutes, { config, services });
    await auth.register(auditRoutes, { db: database.db });
  }, { prefix: '/api/auth' });
  await app.register(notesRoutes, { prefix: '/api/notes', db: database.db, trashDays: config.trashDays });
  await app.register(searchRoutes, {
    prefix: '/api/notes/search', db: database.db,
    database: config.database,
  });
  await app.register(exportRoutes, { prefix: '/api', db: database.db, importMaxBytes: config.importMaxBytes });
  await app.register(trashRoutes, { prefix: '/api/trash', db: database.db, trashDays: config.trashDays });
  await app.register(webRoutes, { root: webRoot ?? DEFAULT_WEB_ROOT });
  return app;
}
