import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from 'fastify';
import { accountRoutes } from './accounts/accounts.routes.js';
import type { AccountServices } from './accounts/accounts.service.js';
import { auditRoutes } from './audit/audit.routes.js';
import { accessControl } from './http/access.js';
import { registerCors } from './http/cors.js';
import { frameworkErrors } from './http/framework-errors.js';
import { registerRoutePolicy } from './http/route-policy.js';
import { findUserById } from './accounts/user.repository.js';
import { normalizeUsername } from './accounts/username.js';
import { cookieParsing, registerCookies } from './sessions/cookie-plugin.js';
import { clearAuthCookies, setAuthCookies } from './sessions/cookies.js';
import { loginLockout, sessionFailures } from './sessions/login-throttle.js';
import { checkInSession } from './sessions/session-lockout.js';
import { sessionRoutes } from './sessions/sessions.routes.js';
import { issueTokenPair } from './sessions/sessions.service.js';
import { endEverySession } from './auth/end-sessions.js';
import type { Reauthenticate } from './sessions/reauthentication.js';
import { authRoutes } from './auth/auth.routes.js';
import type { LoginServices } from './auth/login.service.js';
import {
  reauthenticate as reauthenticateCaller,
  type ReauthenticationServices,
} from './auth/reauthentication.service.js';
import { mfaRoutes } from './mfa/mfa.routes.js';
import { enrolmentRequired, mfaStatus } from './mfa/mfa.service.js';
import { webAuthnSettings } from './mfa/passkeys.service.js';
import { factorsOf } from './mfa/mfa.repository.js';
import { usedBytesOf } from './attachments/attachments.repository.js';
import { administrationRoutes } from './accounts/administration.routes.js';
import type { FindAccountFacts } from './accounts/administration.service.js';
import { invitationRoutes } from './invitations/invitations.routes.js';
import { enrolmentRequirement } from './http/enrolment.js';
import { createMailer } from './mail/mailer.js';
import { securityNotices } from './mail/security-notice.js';
import {
  ACCOUNT_STATUS_DEFAULTS,
  AccountStatusCache,
  accessTokenAllowed,
  type AccountStatusOptions,
} from './accounts/account-status.js';
import { OidcClient } from './oidc/oidc-client.js';
import { oidcRoutes } from './oidc/oidc.routes.js';
import { recoveryRoutes } from './recovery/recovery.routes.js';
import { accessTokenRoutes } from './access-tokens/tokens.routes.js';
import { authenticateToken } from './access-tokens/tokens.service.js';
import { looksLikePersonalToken } from './access-tokens/personal-token.js';
import { createSecretBox } from './mfa/secret-box.js';
import type { MfaServices } from './mfa/mfa.service.js';
import { createPasswordHasher, type PasswordHasher } from './passwords/password-hasher.js';
import { policyFromConfig } from './passwords/password-policy.js';
import { createTokenService } from './sessions/tokens.js';
import { sessionIsLive } from './sessions/session-binding.js';
import type { Config } from './config.js';
import type { Database } from './db/database.js';
import { setWriteCheckpoint } from './db/group-commit.js';
import { StorageHealth } from './db/availability.js';
import { databaseSize, reportsDiskFree } from './db/size.js';
import { maintenanceOutcomes } from './jobs/maintenance.js';
import { registerErrorHandling } from './http/error-handler.js';
import { foldersRoutes } from './folders/folders.routes.js';
import { trashNotesInFolders } from './notes/notes.repository.js';
import { tagsRoutes } from './tags/tags.routes.js';
import { attachmentRoutes } from './attachments/attachments.routes.js';
import { createStorage } from './attachments/create-storage.js';
import { shareRoutes } from './shares/shares.routes.js';
import { addDavMethods, davRoutes } from './dav/dav.routes.js';
import { noteAccess } from './members/note-access.js';
import { memberRoutes } from './members/members.routes.js';
import { sharedWithMeRoutes } from './notes/shared-with-me.routes.js';
import { registerJsonParser } from './http/json-parser.js';
import { createValidatorCompiler } from './shared/validation/validator.js';
import { createSerializerCompiler } from './shared/validation/serializer.js';
import { addressLimits } from './http/rate-limit.js';
import { hashShedding } from './http/shed.js';
import { noStore, registerSecurityHeaders, securityHeaders } from './http/security-headers.js';
import { createBus, isRecheck } from './events/bus.js';
import type { RedisChannelTimeouts } from './events/redis-channel.js';
import { Collab } from './collab/collab.js';
import { addEffectSink } from './db/effects.js';
import { subjectOf } from './shared/claims.js';
import { eventsRoutes } from './events/events.routes.js';
import { LIVE_DEFAULTS, LiveEvents, type LiveOptions } from './events/live.js';
import { throttleCounters, type ThrottleTesting } from './http/throttle-counters.js';
import { clientErrorHandler } from './http/client-error.js';
import { loggerOptions } from './logger.js';
import { notesRoutes } from './notes/notes.routes.js';
import { createWelcomeNote } from './notes/welcome.js';
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
  /** Tests only: pauses at named steps (SessionServices.checkpoint, AccountServices.checkpoint, folder moves, the import slot, merging saves, the bus's pings, a live session's version, collab's close). */
  checkpoint?: (step: string) => Promise<void>;
  /** Tests only: see ThrottleTesting. */
  throttleTesting?: ThrottleTesting;
  /** Tests only: a shorter heartbeat, a smaller buffer for slow readers (events/live.ts). */
  liveTesting?: Partial<LiveOptions>;
  /** Tests only: a Redis subscriber pinged more often (events/redis-channel.ts). */
  busTesting?: Partial<RedisChannelTimeouts>;
  /** Background work in progress (maintenance after listening), reported by /readyz. */
  background?: () => readonly string[];
  /** Tests only: a shorter debounce for storing live documents (collab/collab.ts). */
  collabTesting?: { storeDebounceMs?: number; perUser?: number };
  /** Tests only: how long an instance believes an account's status (accounts/account-status.ts). */
  accountStatusTesting?: Partial<AccountStatusOptions>;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Live changes of this app (events/live.ts); tests publish through it. */
    liveEvents: LiveEvents;
    /** Live co-editing of this app (collab/collab.ts); tests and benchmarks count its documents. */
    collab: Collab;
  }
}

/** How often Node looks for requests past their time-outs: a time-out may be overrun by this much. */
export const CONNECTIONS_CHECKING_INTERVAL_MS = 1000;

/** The whole application; main.ts and the tests build exactly this. */
export async function buildApp({
  config,
  database,
  logger,
  hasher,
  webRoot,
  checkpoint,
  throttleTesting,
  liveTesting,
  busTesting,
  background,
  collabTesting,
  accountStatusTesting,
}: AppOptions): Promise<FastifyInstance> {
  if (checkpoint !== undefined) setWriteCheckpoint(database.db, checkpoint);
  const app = Fastify({
    ...(logger === undefined
      ? { logger: loggerOptions(config) }
      : logger === false
        ? { logger: false }
        : { loggerInstance: logger }),
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
    // A socket silent this long is closed without an answer: never before the request's own
    // time-out, which an operator raises for long imports (a 32 MiB import past 60 s of work on
    // PostgreSQL was hung up on although REQUEST_TIMEOUT_SECONDS allowed 600).
    connectionTimeout: Math.max(60_000, config.requestTimeoutSeconds * 1000),
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
  // Every route part is checked against its schema by one Ajv, and every answer written by one
  // serializer per schema, each compiled once per process (shared/validation/).
  app.setValidatorCompiler(createValidatorCompiler());
  app.setSerializerCompiler(createSerializerCompiler());
  addDavMethods(app);

  // Plumbing: every request, whatever its route. Each hook is synchronous and does only what
  // depends on the request; what does not (route labels, header lists) is worked out here, once.
  labelRoutes(app);
  const storage = new StorageHealth();
  registerErrorHandling(app, storage);
  registerJsonParser(app);
  registerRequestLog(app);
  const closing = registerGracefulClose(app);
  registerSecurityHeaders(app, config, closing);
  await registerCors(app, config);

  // Policy layers: the hooks each route's config.policy asks for, attached as the route is added
  // in the one order declared in http/route-policy.ts (limits, shedding, cookies, access, lockout,
  // no-store), whatever the order they are built in here. RATE_LIMIT=off leaves out the counters.
  const tokens = createTokenService(config.jwtSecret);
  const passwordHasher = hasher ?? createPasswordHasher({ cost: config.argon2Cost });
  const counters = config.rateLimit ? await throttleCounters(app, config, throttleTesting) : undefined;
  const limits = counters === undefined ? undefined : await addressLimits(app, config.rateLimits, counters.rate);
  // One count per account for logins; one per session for a password asked of a signed-in caller,
  // so failed logins cannot lock the owner out of ending a thief's sessions (WebDAV's tokens count per address only).
  const failures =
    counters === undefined ? undefined : sessionFailures(counters.login, config.rateLimits.loginFailures);
  // Whether an account is disabled, cached per instance; forgotten on every instance through the bus below.
  const accountStatus = new AccountStatusCache(database.db, { ...ACCOUNT_STATUS_DEFAULTS, ...accountStatusTesting });
  registerRoutePolicy(app, {
    ...(counters === undefined || limits === undefined
      ? {}
      : {
          limits: limits.layer,
          lockout: loginLockout(counters.login, config.rateLimits.loginFailures),
        }),
    shedding: hashShedding(passwordHasher),
    cookies: cookieParsing,
    access: accessControl(app, {
      verify: (token) => tokens.verify(token),
      findAccount: (userId) => findUserById(database.db, userId),
      normalizeUsername,
      personal: {
        looksLike: looksLikePersonalToken,
        authenticate: (token, scope) => authenticateToken(database.db, token, scope),
      },
      sessionIsLive: (claims) => sessionIsLive(database.db, claims),
      accountAllows: (claims) => {
        const userId = subjectOf(claims);
        // A sub that is no user id: each route answers 400 Invalid user ID, as before.
        if (userId === null) return Promise.resolve(true);
        return accessTokenAllowed(accountStatus, userId, claims.iat, () => sessionIsLive(database.db, claims));
      },
      credentialFailure: limits?.credentialFailure,
    }),
    note: noteAccess(app, database.db),
    ...(config.requireSecondFactor === 'off'
      ? {}
      : {
          enrolment: enrolmentRequirement((userId) =>
            enrolmentRequired(database.db, config.requireSecondFactor, userId),
          ),
        }),
    noStore,
  });

  // Features: the document, probes and metrics, then the API (each declares its routes' policy).
  await registerOpenApi(app);
  // Live changes: streams on this instance, told of changes on every instance through the bus.
  const bus = await createBus(config, app.log, busTesting, checkpoint);
  // Every instance hears "this user's credentials changed" (its own included) and forgets the account.
  bus.subscribe((message) => {
    if (isRecheck(message)) accountStatus.forget(message.recheck);
  });
  const live = new LiveEvents(database.db, bus, app.log, { ...LIVE_DEFAULTS, ...liveTesting }, (userId) =>
    enrolmentRequired(database.db, config.requireSecondFactor, userId),
  );
  app.decorate('liveEvents', live);
  // Live co-editing (collab/collab.ts): a WebSocket at /api/collab, taken from the HTTP upgrade.
  const collab = new Collab({
    db: database.db,
    log: app.log,
    idleMs: config.collabIdleSeconds * 1000,
    bus,
    ...(config.redisUrl !== undefined && { redis: { url: config.redisUrl, prefix: config.redisKeyPrefix } }),
    ...(config.collabStoreDebounceMs !== undefined && { storeDebounceMs: config.collabStoreDebounceMs }),
    ...(collabTesting?.storeDebounceMs !== undefined && { storeDebounceMs: collabTesting.storeDebounceMs }),
    ...(collabTesting?.perUser !== undefined && { perUser: collabTesting.perUser }),
    ...(checkpoint !== undefined && { checkpoint }),
    authenticate: async (token) => {
      const claims = tokens.verify(token);
      const userId = claims === null || claims.type !== 'access' ? null : subjectOf(claims);
      if (claims === null || userId === null || !(await sessionIsLive(database.db, claims))) return undefined;
      const user = await findUserById(database.db, userId);
      if (user === undefined) return undefined;
      // REQUIRE_SECOND_FACTOR: a live document is a route like any other, closed until a factor is set up.
      if (
        config.requireSecondFactor !== 'off' &&
        (await enrolmentRequired(database.db, config.requireSecondFactor, userId))
      )
        throw Object.assign(new Error('mfa_enrolment_required'), { reason: 'mfa_enrolment_required' });
      return {
        userId,
        username: user.username,
        // Checked again when the user's credentials change (a session ends, a factor is removed).
        stillValid: async () =>
          (await sessionIsLive(database.db, claims)) &&
          !(await enrolmentRequired(database.db, config.requireSecondFactor, userId)),
      };
    },
  });
  await collab.start();
  app.decorate('collab', collab);
  const removeCollabSink = addEffectSink(database.db, collab);
  app.server.on('upgrade', (request, socket, head: Buffer) => {
    if (!collab.handleUpgrade(request, socket, head)) socket.destroy();
  });
  // Streams and live documents never end by themselves: ended first, or closing would wait for them.
  app.addHook('preClose', async () => {
    removeCollabSink();
    await Promise.all([live.endAll(), collab.close()]);
  });
  app.addHook('onClose', async () => live.close());
  // One object serves every auth folder. Where a lower folder needs a higher one's work, it gets it
  // here rather than importing it (test/architecture.test.ts): accounts the sessions' functions,
  // the routes that ask for the password again the check in auth/, which knows second factors.
  const services: AccountServices & LoginServices & MfaServices & ReauthenticationServices = {
    db: database.db,
    tokens,
    hasher: passwordHasher,
    web: webAuthnSettings(config.publicUrl),
    policy: policyFromConfig(config, app.log),
    reuseGraceSeconds: config.refreshReuseGraceSeconds,
    box: createSecretBox(config.mfaSecret),
    sessionFailures: failures,
    ...(checkpoint === undefined ? {} : { checkpoint }),
    log: app.log,
    credentialsRevoked: (userId) => {
      accountStatus.forget(userId);
      live.credentialsRevoked(userId);
      collab.credentialsRevoked(userId);
    },
    passwordLogin: config.passwordLogin,
    ...(config.welcomeNote ? { welcome: (userId: string) => createWelcomeNote(database.db, userId) } : {}),
    sessions: {
      endAll: endEverySession,
      open: (trx, user, client) => issueTokenPair(trx, tokens, user, client),
      checkIn: (caller, check) => checkInSession(services, caller, check),
    },
  };
  // What administrators see of each account, from the folders that own it (accounts imports neither).
  const accountFacts: FindAccountFacts = async (ids) => {
    const [factors, used] = await Promise.all([factorsOf(database.db, ids), usedBytesOf(database.db, ids)]);
    return new Map(
      ids.map((id) => {
        const mfa = factors.get(id) ?? { totp: false, passkeys: 0 };
        return [id, { ...mfa, storageUsedBytes: used.get(id) ?? 0 }];
      }),
    );
  };
  const mailer = createMailer(config.mail, app.log);
  app.addHook('onClose', async () => mailer.close());
  services.securityNotice = securityNotices({
    mailer,
    log: app.log,
    publicUrl: config.publicUrl,
    findRecipient: (userId) => findUserById(database.db, userId),
  });
  const reauthenticate: Reauthenticate = (caller, proof, client, kind) =>
    reauthenticateCaller(services, caller, proof, client, kind);
  const cookies = {
    set: (reply: FastifyReply, issued: { refreshToken: string; refreshExpiresAt: number }) =>
      setAuthCookies(reply, config, issued.refreshToken, issued.refreshExpiresAt),
    clear: (reply: FastifyReply) => clearAuthCookies(reply, config),
  };
  registerMetrics(app, {
    hasher: services.hasher,
    pool: database.poolStats,
    redisBreaker: counters?.redisBreaker,
    token: config.metricsToken,
    storage,
    liveStreams: () => live.total,
    maintenance: maintenanceOutcomes,
    databaseSize: () => databaseSize(config.database, database.db),
    diskFree: reportsDiskFree(config.database),
  });
  await app.register(healthRoutes, {
    database,
    draining: closing,
    storage,
    ...(background === undefined ? {} : { background }),
  });

  await app.register(
    async (auth) => {
      // Cookies only below /api/auth: some of its routes set them, its cookie routes read them.
      await registerCookies(auth, config);
      await auth.register(accountRoutes, {
        config,
        services,
        cookies,
        factors: (userId) => mfaStatus(database.db, userId),
        enrolmentRequired: (userId) => enrolmentRequired(database.db, config.requireSecondFactor, userId),
        facts: accountFacts,
      });
      await auth.register(administrationRoutes, { config, services, cookies, facts: accountFacts, mailer });
      await auth.register(invitationRoutes, {
        services: { db: database.db, log: app.log, publicUrl: config.publicUrl, mailer },
      });
      await auth.register(authRoutes, { config, services });
      await auth.register(sessionRoutes, { config, services, reauthenticate });
      await auth.register(mfaRoutes, { config, services, reauthenticate });
      await auth.register(accessTokenRoutes, { services, reauthenticate });
      await auth.register(auditRoutes, { db: database.db });
      await auth.register(recoveryRoutes, {
        services: { ...services, mailer, publicUrl: config.publicUrl },
        reauthenticate,
      });
      await auth.register(oidcRoutes, {
        config,
        services,
        oidc: config.oidc === null ? null : new OidcClient(config.oidc, `${config.publicUrl}/api/auth/oidc/callback`),
      });
    },
    { prefix: '/api/auth' },
  );
  await app.register(eventsRoutes, { prefix: '/api', live, headers: securityHeaders(config) });
  await app.register(notesRoutes, {
    prefix: '/api/notes',
    db: database.db,
    trashDays: config.trashDays,
    ...(checkpoint === undefined ? {} : { checkpoint }),
  });
  await app.register(sharedWithMeRoutes, { prefix: '/api', db: database.db });
  await app.register(memberRoutes, { prefix: '/api', db: database.db });
  await app.register(searchRoutes, {
    prefix: '/api/notes/search',
    db: database.db,
    database: config.database,
  });
  const attachmentServices = {
    db: database.db,
    storage: createStorage(config, database.db),
    log: app.log,
    maxBytes: config.attachmentMaxBytes,
    quotaBytes: config.storageQuotaBytes,
  };
  await app.register(exportRoutes, {
    prefix: '/api',
    db: database.db,
    importMaxBytes: config.importMaxBytes,
    attachments: attachmentServices,
    ...(checkpoint === undefined ? {} : { checkpoint }),
  });
  await app.register(trashRoutes, { prefix: '/api/trash', db: database.db, trashDays: config.trashDays });
  await app.register(foldersRoutes, {
    prefix: '/api/folders',
    db: database.db,
    trashDays: config.trashDays,
    takeNotes: trashNotesInFolders,
    ...(checkpoint === undefined ? {} : { checkpoint }),
  });
  await app.register(tagsRoutes, { prefix: '/api/tags', db: database.db });
  await app.register(attachmentRoutes, { prefix: '/api/attachments', services: attachmentServices });
  await app.register(shareRoutes, {
    prefix: '/api',
    db: database.db,
    publicUrl: config.publicUrl,
    attachments: attachmentServices,
  });
  await app.register(davRoutes, {
    services: { db: database.db, attachments: attachmentServices, trashDays: config.trashDays },
  });
  await app.register(webRoutes, { root: webRoot ?? DEFAULT_WEB_ROOT });
  return app;
}
