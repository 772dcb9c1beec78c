import { randomBytes } from 'node:crypto';
import path from 'node:path';

export type DatabaseConfig =
  | { kind: 'sqlite'; filename: string }
  | {
      kind: 'postgres';
      url: string;
      poolMax: number;
      /** DATABASE_CONNECT_TIMEOUT_SECONDS: a connection not made within it fails (503). */
      connectTimeoutMs?: number;
      /** DATABASE_QUERY_TIMEOUT_SECONDS: a statement running longer is cancelled; a connection silent that long is replaced. */
      queryTimeoutMs?: number;
    };

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly production: boolean;
  readonly database: DatabaseConfig;
  readonly jwtSecret: string;
  readonly csrfSecret: string;
  /** What encrypts TOTP secrets at rest (through HKDF, mfa/secret-box.ts): MFA_SECRET, else JWT_SECRET. */
  readonly mfaSecret: string;
  /** Where attachment bytes live: the database (default) or an S3-compatible store. */
  readonly attachmentStorage: AttachmentStorageConfig;
  /** ATTACHMENT_MAX_BYTES: the largest single file. */
  readonly attachmentMaxBytes: number;
  /** STORAGE_QUOTA_BYTES: attachment bytes per user; 0 is unlimited. */
  readonly storageQuotaBytes: number;
  /** PUBLIC_URL's origin: the address people use; WebAuthn's origin and relying party come from it. */
  readonly publicUrl: string;
  /** True when the secrets were generated for this process (development only). */
  readonly secretsGenerated: boolean;
  readonly cookieDomain: string | undefined;
  readonly admin: { readonly username: string; readonly password: string } | undefined;
  /** Base URL of the k-anonymity range API, or null when the remote check is off. */
  readonly pwnedPasswordsUrl: string | null;
  readonly passwordMinLength: number;
  readonly passwordMinEntropy: number;
  readonly rateLimit: boolean;
  /** Throttling thresholds; see src/http/rate-limit.ts and src/sessions/login-throttle.ts. */
  readonly rateLimits: RateLimits;
  /** Shared throttling counters across instances; in-process memory when unset. */
  readonly redisUrl: string | undefined;
  readonly redisKeyPrefix: string;
  /** Browser origins allowed to call the API cross-origin (with credentials); none by default. */
  readonly corsOrigins: readonly string[];
  readonly logLevel: string;
  /** Origins besides the request's own HTTPS origin that may call the refresh route in production. */
  readonly trustedOrigins: readonly string[];
  readonly trustProxy: boolean;
  /** When set, GET /metrics requires `Authorization: Bearer <token>`. */
  readonly metricsToken: string | undefined;
  /** Days a deleted note stays restorable in the trash; 0 deletes at once. */
  readonly trashDays: number;
  /** COLLAB_IDLE_SECONDS: a live co-editing session becomes a version after this much quiet (src/collab). */
  readonly collabIdleSeconds: number;
  /**
   * TEST_COLLAB_STORE_MS (test suite only): how long a live document's changes wait to be stored,
   * so a browser test can stop the server within that time. Undefined: collab.ts' own.
   */
  readonly collabStoreDebounceMs: number | undefined;
  /** WELCOME_NOTE: off refuses the welcome note a sign-up may ask for (the web client's does). */
  readonly welcomeNote: boolean;
  /** A rotated refresh token replayed within this many seconds is refused without ending its session. */
  readonly refreshReuseGraceSeconds: number;
  /** SHUTDOWN_DRAIN_SECONDS, in ms: after SIGTERM, how long /readyz says 503 while the listener still serves. */
  readonly shutdownDrainMs: number;
  /** Auth events older than this many days are deleted by the maintenance job. */
  readonly auditRetentionDays: number;
  /** VELLUM_PASSWORD: the password the CLI's create-admin and reset-password use (else standard input). */
  readonly cliPassword: string | undefined;
  /** Largest accepted import document, in bytes. */
  readonly importMaxBytes: number;
  /** HISTORY_RETENTION: which old versions the hourly job keeps; null keeps every version. */
  readonly historyRetention: HistoryRetention | null;
  /** A request (headers and body) that has not fully arrived after this many seconds is cut with 408. */
  readonly requestTimeoutSeconds: number;
  /** Request headers that have not fully arrived after this many seconds are cut with 408. */
  readonly headersTimeoutSeconds: number;
  /**
   * Argon2id cost of new password hashes: 'owasp' always, except in the test suite (TEST_ARGON2=cheap
   * with NODE_ENV=test), which hashes hundreds of times. Verification reads the cost from each hash.
   */
  readonly argon2Cost: Argon2Cost;
  /** SIGNUP: who may create an account (docs/configuration.md, "Run it for a team"). */
  readonly signup: SignupMode;
  /** REQUIRE_SECOND_FACTOR: which accounts must enrol a second factor before anything else. */
  readonly requireSecondFactor: SecondFactorRequirement;
  /** PASSWORD_LOGIN: false leaves single sign-on and passkeys as the only ways in (administrators keep their password). */
  readonly passwordLogin: boolean;
  /** Single sign-on with an OpenID Connect provider: on when OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET are all set. */
  readonly oidc: OidcConfig | null;
  /** SMTP_URL and MAIL_FROM: null sends no mail (administrators hand links over themselves). */
  readonly mail: MailConfig | null;
  /**
   * Tests only (TEST_PAUSE_AT, refused unless NODE_ENV=test): a named start-up point (`snapshot`,
   * `migration:NAME` just before that migration commits, `maintenance:TASK` before a housekeeping task,
   * `maintenance:TASK:unbounded` once its statements run without a time-out on PostgreSQL,
   * `maintenance:TASK:claimed` once its run is claimed) where the server logs "paused at NAME" and
   * waits for a signal (SIGTERM/SIGINT shut down, SIGUSR2 carries on), so a test can kill it there.
   */
  readonly testPauseAt: string | undefined;
}

export type SignupMode = 'open' | 'invite' | 'closed';
export type SecondFactorRequirement = 'off' | 'admins' | 'all';

export interface OidcConfig {
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** The button's label: "Sign in with {name}". */
  readonly name: string;
  readonly scopes: string;
  /** The claim that names a new account. */
  readonly usernameClaim: string;
  /** Members of this group (the `groups` claim) are administrators; null: the provider makes none. */
  readonly adminGroup: string | null;
}

export interface MailConfig {
  readonly smtpUrl: string;
  readonly from: string;
}

export type AttachmentStorageConfig =
  | { readonly kind: 'database' }
  | {
      readonly kind: 's3';
      readonly endpoint: string | undefined;
      readonly region: string;
      readonly bucket: string;
      readonly accessKeyId: string | undefined;
      readonly secretAccessKey: string | undefined;
      readonly forcePathStyle: boolean;
    };

export type Argon2Cost = 'owasp' | 'test-cheap';

export type RetentionTierName = 'hourly' | 'daily' | 'weekly' | 'monthly';

/** Durations in milliseconds; Infinity is `forever`. */
export interface HistoryRetention {
  /** Every version younger than this is kept; 0 when the policy has no `all` tier. */
  readonly allMs: number;
  readonly tiers: readonly { readonly name: RetentionTierName; readonly ms: number }[];
}

export interface RateLimits {
  /** Requests per minute per client address, all routes together. */
  readonly globalPerMinute: number;
  /** Password attempts (login, password change, account deletion) per minute per address. */
  readonly loginPerMinute: number;
  readonly signupPerHour: number;
  readonly refreshPerMinute: number;
  /** Breach checks of a password being typed (each may ask the range API) per minute per address. */
  readonly breachChecksPerMinute: number;
  /** Failed logins per account, or passwords asked again per session, within 15 minutes before it is locked out. */
  readonly loginFailures: number;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const MIN_SECRET_LENGTH = 32;

/**
 * NODE_ENV: `production` (secrets required, Secure cookies), `development` (the default) or `test`.
 * Anything else is refused: a typo (`prod`) ran in development mode, with secrets written beside
 * the database and cookies without Secure, and said nothing.
 */
function readNodeEnv(env: Env): string {
  const value = nonEmpty(env.NODE_ENV) ?? 'development';
  if (!['production', 'development', 'test'].includes(value))
    throw new ConfigError(`NODE_ENV must be production, development or test, got "${value}"`);
  return value;
}

/**
 * COOKIE_DOMAIN: a host name (`notes.example.com`, or `.example.com`), never a URL. Unchecked, a
 * pasted URL started the server and then failed every login with a 500 when the cookie was set.
 */
function readCookieDomain(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!/^\.?[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i.test(value))
    throw new ConfigError(
      `COOKIE_DOMAIN must be a host name such as notes.example.com (no scheme, port or path), got "${value}"`,
    );
  return value;
}

/** Reads and validates every variable once; nothing else in the app reads process.env. */
export function loadConfig(env: Env = process.env): Config {
  const production = readNodeEnv(env) === 'production';
  const secrets = readSecrets(env, production);
  const port = integer(env, 'PORT', 8080, 0, 65535);
  const config: Config = {
    port,
    host: nonEmpty(env.HOST) ?? '127.0.0.1',
    production,
    database: parseDatabaseUrl(
      nonEmpty(env.DATABASE_URL) ?? 'sqlite:./data/vellum.db',
      integer(env, 'DATABASE_POOL_MAX', 10, 1, 1000),
      {
        connectTimeoutMs: number(env, 'DATABASE_CONNECT_TIMEOUT_SECONDS', 5, 0.1, 600) * 1000,
        queryTimeoutMs: number(env, 'DATABASE_QUERY_TIMEOUT_SECONDS', 30, 0.1, 3600) * 1000,
      },
    ),
    ...secrets,
    publicUrl: readPublicUrl(nonEmpty(env.PUBLIC_URL), port),
    attachmentStorage: readAttachmentStorage(env),
    attachmentMaxBytes: integer(env, 'ATTACHMENT_MAX_BYTES', 25 * 1024 * 1024, 1, 1024 * 1024 * 1024),
    storageQuotaBytes: integer(env, 'STORAGE_QUOTA_BYTES', 1024 * 1024 * 1024, 0, Number.MAX_SAFE_INTEGER),
    cookieDomain: readCookieDomain(nonEmpty(env.COOKIE_DOMAIN)),
    admin: readAdmin(env),
    pwnedPasswordsUrl: readPwnedUrl(env.PWNED_PASSWORDS_URL),
    passwordMinLength: integer(env, 'PASSWORD_MIN_LENGTH', 15, 1, 256),
    passwordMinEntropy: number(env, 'PASSWORD_MIN_ENTROPY', 60, 0, 10_000),
    rateLimit: onOff(env, 'RATE_LIMIT', true),
    rateLimits: {
      globalPerMinute: integer(env, 'RATE_LIMIT_GLOBAL_PER_MINUTE', 600, 1, 1_000_000),
      loginPerMinute: integer(env, 'RATE_LIMIT_LOGIN_PER_MINUTE', 20, 1, 1_000_000),
      signupPerHour: integer(env, 'RATE_LIMIT_SIGNUP_PER_HOUR', 10, 1, 1_000_000),
      refreshPerMinute: integer(env, 'RATE_LIMIT_REFRESH_PER_MINUTE', 30, 1, 1_000_000),
      breachChecksPerMinute: integer(env, 'RATE_LIMIT_BREACH_CHECKS_PER_MINUTE', 30, 1, 1_000_000),
      loginFailures: integer(env, 'RATE_LIMIT_LOGIN_FAILURES', 5, 1, 1000),
    },
    redisUrl: readRedisUrl(env.REDIS_URL),
    redisKeyPrefix: nonEmpty(env.REDIS_KEY_PREFIX) ?? 'vellum:',
    corsOrigins: list(env.CORS_ORIGINS).map((origin) => parseOrigin(origin, 'CORS_ORIGINS')),
    logLevel: oneOf(env, 'LOG_LEVEL', 'info', LOG_LEVELS),
    trustedOrigins: list(env.TRUSTED_ORIGINS).map((origin) => parseOrigin(origin, 'TRUSTED_ORIGINS')),
    trustProxy: onOff(env, 'TRUST_PROXY', false),
    metricsToken: nonEmpty(env.METRICS_TOKEN),
    trashDays: integer(env, 'TRASH_DAYS', 30, 0, 36_500),
    collabIdleSeconds: number(env, 'COLLAB_IDLE_SECONDS', 5, 0.01, 3600),
    collabStoreDebounceMs: readCollabStoreDebounce(env),
    welcomeNote: onOff(env, 'WELCOME_NOTE', true),
    historyRetention: parseHistoryRetention(nonEmpty(env.HISTORY_RETENTION) ?? 'off'),
    refreshReuseGraceSeconds: integer(env, 'REFRESH_REUSE_GRACE_SECONDS', 10, 0, 3600),
    shutdownDrainMs: number(env, 'SHUTDOWN_DRAIN_SECONDS', 5, 0, 300) * 1000,
    auditRetentionDays: integer(env, 'AUDIT_RETENTION_DAYS', 90, 1, 36_500),
    cliPassword: env.VELLUM_PASSWORD === '' ? undefined : env.VELLUM_PASSWORD,
    importMaxBytes: integer(env, 'IMPORT_MAX_BYTES', 64 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    ...readTimeouts(env),
    argon2Cost: readArgon2Cost(env),
    signup: oneOf(env, 'SIGNUP', 'open', ['open', 'invite', 'closed']) as SignupMode,
    requireSecondFactor: oneOf(env, 'REQUIRE_SECOND_FACTOR', 'off', [
      'off',
      'admins',
      'all',
    ]) as SecondFactorRequirement,
    passwordLogin: onOff(env, 'PASSWORD_LOGIN', true),
    oidc: readOidc(env),
    mail: readMail(env, readPublicUrl(nonEmpty(env.PUBLIC_URL), port)),
    testPauseAt: readTestPause(env),
  };
  return Object.freeze(config);
}

export function parseDatabaseUrl(
  url: string,
  poolMax = 10,
  timeouts: { connectTimeoutMs?: number; queryTimeoutMs?: number } = {},
): DatabaseConfig {
  if (url.startsWith('sqlite:')) {
    const filename = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (filename === '') throw new ConfigError('DATABASE_URL: sqlite: needs a file path, e.g. sqlite:./data/vellum.db');
    return { kind: 'sqlite', filename: filename === ':memory:' ? filename : path.resolve(filename) };
  }
  if (/^postgres(ql)?:\/\//.test(url)) {
    try {
      new URL(url);
    } catch {
      throw new ConfigError('DATABASE_URL is not a valid postgres:// URL');
    }
    return { kind: 'postgres', url, poolMax, ...timeouts };
  }
  throw new ConfigError('DATABASE_URL must start with sqlite: or postgres://');
}

function readSecrets(env: Env, production: boolean) {
  const jwt = nonEmpty(env.JWT_SECRET);
  const csrf = nonEmpty(env.CSRF_SECRET);
  for (const [name, value] of [
    ['JWT_SECRET', jwt],
    ['CSRF_SECRET', csrf],
  ] as const) {
    if (value !== undefined && value.length < MIN_SECRET_LENGTH) {
      throw new ConfigError(`${name} must be at least ${MIN_SECRET_LENGTH} characters long`);
    }
    if (value === undefined && production) {
      throw new ConfigError(`${name} is required when NODE_ENV=production (at least ${MIN_SECRET_LENGTH} characters)`);
    }
    if (value !== undefined && production && isPlaceholderSecret(value)) {
      throw new ConfigError(
        `${name} looks like a placeholder or default value; generate a random one, e.g. openssl rand -base64 48`,
      );
    }
  }
  if (jwt !== undefined && jwt === csrf) throw new ConfigError('JWT_SECRET and CSRF_SECRET must differ');
  const mfa = nonEmpty(env.MFA_SECRET);
  if (mfa !== undefined && mfa.length < MIN_SECRET_LENGTH)
    throw new ConfigError(`MFA_SECRET must be at least ${MIN_SECRET_LENGTH} characters long`);
  const jwtSecret = jwt ?? randomBytes(32).toString('base64url');
  return {
    jwtSecret,
    mfaSecret: mfa ?? jwtSecret,
    csrfSecret: csrf ?? randomBytes(32).toString('base64url'),
    secretsGenerated: jwt === undefined || csrf === undefined,
  };
}

/**
 * Values copied from examples or typed by hand rather than generated: a known placeholder word,
 * "secret" more than once, few distinct characters, or one short piece repeated. A generated
 * secret (base64 or hex of random bytes) never looks like this.
 */
export function isPlaceholderSecret(value: string): boolean {
  const lower = value.toLowerCase();
  if (/change[-_. ]?me|placeholder|example|default|dummy|insecure|replace[-_. ]?(me|this)/.test(lower)) return true;
  if ((lower.match(/secret/g) ?? []).length >= 2) return true;
  if (new Set(value).size < 8) return true;
  return /^(.+?)\1+$/s.test(value);
}

function readTimeouts(env: Env) {
  const requestTimeoutSeconds = integer(env, 'REQUEST_TIMEOUT_SECONDS', 30, 1, 3600);
  const headersTimeoutSeconds = integer(env, 'HEADERS_TIMEOUT_SECONDS', Math.min(10, requestTimeoutSeconds), 1, 3600);
  // Node refuses a headers time-out longer than the request's, which includes the headers.
  if (headersTimeoutSeconds > requestTimeoutSeconds) {
    throw new ConfigError(
      `HEADERS_TIMEOUT_SECONDS (${headersTimeoutSeconds}) must not exceed REQUEST_TIMEOUT_SECONDS (${requestTimeoutSeconds})`,
    );
  }
  return { requestTimeoutSeconds, headersTimeoutSeconds };
}

/**
 * TEST_ARGON2=cheap is the test suite's and nobody else's: refused unless NODE_ENV=test, so a
 * deployment that copied it (or any other value) fails at start-up instead of storing weak hashes.
 */
function readArgon2Cost(env: Env): Argon2Cost {
  const raw = nonEmpty(env.TEST_ARGON2);
  if (raw === undefined) return 'owasp';
  if (raw !== 'cheap') throw new ConfigError(`TEST_ARGON2 must be "cheap" or unset, got "${raw}"`);
  if (env.NODE_ENV !== 'test') {
    throw new ConfigError(
      `TEST_ARGON2=cheap is for the test suite only and is refused unless NODE_ENV=test (NODE_ENV is ${env.NODE_ENV === undefined ? 'unset' : `"${env.NODE_ENV}"`}); remove it`,
    );
  }
  return 'test-cheap';
}

/** TEST_COLLAB_STORE_MS: like TEST_ARGON2, refused unless NODE_ENV=test (a deployment must store promptly). */
function readCollabStoreDebounce(env: Env): number | undefined {
  if (nonEmpty(env.TEST_COLLAB_STORE_MS) === undefined) return undefined;
  if (env.NODE_ENV !== 'test')
    throw new ConfigError(
      'TEST_COLLAB_STORE_MS is for the test suite only and is refused unless NODE_ENV=test; remove it',
    );
  return integer(env, 'TEST_COLLAB_STORE_MS', 1000, 1, 3_600_000);
}

function readOidc(env: Env): OidcConfig | null {
  const issuer = nonEmpty(env.OIDC_ISSUER);
  const clientId = nonEmpty(env.OIDC_CLIENT_ID);
  const clientSecret = nonEmpty(env.OIDC_CLIENT_SECRET);
  const set = [issuer, clientId, clientSecret].filter((v) => v !== undefined).length;
  if (set === 0) return null;
  if (issuer === undefined || clientId === undefined || clientSecret === undefined)
    throw new ConfigError('OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET must be set together');
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw new ConfigError("OIDC_ISSUER must be the provider's issuer URL, e.g. https://id.example.com/realms/team");
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new ConfigError('OIDC_ISSUER must be an http(s) URL');
  const scopes = nonEmpty(env.OIDC_SCOPES) ?? 'openid profile email';
  if (!scopes.split(/\s+/).includes('openid')) throw new ConfigError('OIDC_SCOPES must include "openid"');
  return {
    issuer,
    clientId,
    clientSecret,
    name: nonEmpty(env.OIDC_NAME) ?? 'Single sign-on',
    scopes,
    usernameClaim: nonEmpty(env.OIDC_USERNAME_CLAIM) ?? 'preferred_username',
    adminGroup: nonEmpty(env.OIDC_ADMIN_GROUP) ?? null,
  };
}

function readMail(env: Env, publicUrl: string): MailConfig | null {
  const smtpUrl = nonEmpty(env.SMTP_URL);
  if (smtpUrl === undefined) return null;
  if (!/^smtps?:\/\/./.test(smtpUrl)) throw new ConfigError('SMTP_URL must be an smtp:// or smtps:// URL');
  try {
    new URL(smtpUrl);
  } catch {
    throw new ConfigError('SMTP_URL must be an smtp:// or smtps:// URL such as smtp://user:pass@mail.example.com:587');
  }
  const from = nonEmpty(env.MAIL_FROM) ?? `Vellum <no-reply@${new URL(publicUrl).hostname}>`;
  return { smtpUrl, from };
}

function readTestPause(env: Env): string | undefined {
  const raw = nonEmpty(env.TEST_PAUSE_AT);
  if (raw !== undefined && env.NODE_ENV !== 'test') {
    throw new ConfigError('TEST_PAUSE_AT is for the test suite only and is refused unless NODE_ENV=test; remove it');
  }
  return raw;
}

function readAdmin(env: Env) {
  const username = nonEmpty(env.ADMIN_USERNAME);
  const password = env.ADMIN_PASSWORD === '' ? undefined : env.ADMIN_PASSWORD;
  if ((username === undefined) !== (password === undefined)) {
    throw new ConfigError('ADMIN_USERNAME and ADMIN_PASSWORD must be set together');
  }
  return username !== undefined && password !== undefined ? { username, password } : undefined;
}

function readPwnedUrl(value: string | undefined): string | null {
  const url = nonEmpty(value) ?? 'https://api.pwnedpasswords.com';
  if (url === 'off') return null;
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error();
  } catch {
    throw new ConfigError('PWNED_PASSWORDS_URL must be an http(s) URL or "off"');
  }
  return url.replace(/\/+$/, '');
}

/**
 * The origin people use. Without PUBLIC_URL it is localhost on PORT, not HOST's address: browsers
 * refuse an IP address as a WebAuthn relying party, so passkeys work out of the box on localhost.
 */
function readPublicUrl(value: string | undefined, port: number): string {
  if (value === undefined) return `http://localhost:${port}`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError('PUBLIC_URL must be an http(s) URL such as https://notes.example.com');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError('PUBLIC_URL must be an http(s) URL');
  return url.origin;
}

function readAttachmentStorage(env: Env): AttachmentStorageConfig {
  const kind = nonEmpty(env.ATTACHMENT_STORAGE) ?? 'database';
  if (kind === 'database') return { kind };
  if (kind !== 's3') throw new ConfigError(`ATTACHMENT_STORAGE must be "database" or "s3", got "${kind}"`);
  const bucket = nonEmpty(env.S3_BUCKET);
  if (bucket === undefined) throw new ConfigError('S3_BUCKET is required when ATTACHMENT_STORAGE=s3');
  const endpoint = nonEmpty(env.S3_ENDPOINT);
  if (endpoint !== undefined && !/^https?:\/\/./.test(endpoint))
    throw new ConfigError('S3_ENDPOINT must be an http(s) URL');
  return {
    kind,
    bucket,
    endpoint,
    region: nonEmpty(env.S3_REGION) ?? 'us-east-1',
    accessKeyId: nonEmpty(env.S3_ACCESS_KEY_ID),
    secretAccessKey: nonEmpty(env.S3_SECRET_ACCESS_KEY),
    forcePathStyle: onOff(env, 'S3_FORCE_PATH_STYLE', false),
  };
}

function readRedisUrl(value: string | undefined): string | undefined {
  const url = nonEmpty(value);
  if (url !== undefined && !/^rediss?:\/\/./.test(url))
    throw new ConfigError('REDIS_URL must be a redis:// or rediss:// URL');
  return url;
}

function parseOrigin(value: string, name: string): string {
  try {
    const url = new URL(value);
    if (url.origin === 'null') throw new Error();
    return url.origin;
  } catch {
    throw new ConfigError(`${name}: "${value}" is not an origin like https://notes.example.com`);
  }
}

const RETENTION_TIERS: readonly string[] = ['all', 'hourly', 'daily', 'weekly', 'monthly'];
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * `off`, or tiers `NAME=DURATION` separated by commas (e.g. `all=30d,daily=365d,weekly=forever`),
 * NAME one of all/hourly/daily/weekly/monthly, each at most once, DURATION `<n>d` or `forever`.
 */
export function parseHistoryRetention(raw: string): HistoryRetention | null {
  if (raw.toLowerCase() === 'off') return null;
  const fail = (why: string) =>
    new ConfigError(
      `HISTORY_RETENTION must be "off" or tiers like "all=30d,daily=365d,weekly=forever" (${why}), got "${raw}"`,
    );
  let allMs = 0;
  const tiers: { name: RetentionTierName; ms: number }[] = [];
  const seen = new Set<string>();
  for (const part of raw.split(',')) {
    const match = /^\s*([a-z]+)\s*=\s*(?:(\d{1,6})d|(forever))\s*$/i.exec(part);
    if (match === null) throw fail(`"${part.trim()}" is not NAME=<n>d or NAME=forever`);
    const name = match[1]!.toLowerCase();
    if (!RETENTION_TIERS.includes(name)) throw fail(`unknown tier "${match[1]}"`);
    if (seen.has(name)) throw fail(`tier "${name}" given twice`);
    seen.add(name);
    const ms = match[3] !== undefined ? Infinity : Number(match[2]) * DAY_MS;
    if (name === 'all') allMs = ms;
    else tiers.push({ name: name as RetentionTierName, ms });
  }
  return Object.freeze({ allMs, tiers: Object.freeze(tiers) });
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}

function list(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

function number(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return fallback;
  // Decimal only: Number() also reads "0x1F90" (8080) and "1e3" (1000), which nobody means.
  const value = /^[+-]?(\d+\.?\d*|\.\d+)$/.test(raw.trim()) ? Number(raw) : Number.NaN;
  if (!Number.isFinite(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be a number from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const value = number(env, name, fallback, min, max);
  if (!Number.isInteger(value)) throw new ConfigError(`${name} must be a whole number, got "${env[name]}"`);
  return value;
}

function onOff(env: Env, name: string, fallback: boolean): boolean {
  const raw = nonEmpty(env[name])?.toLowerCase();
  if (raw === undefined) return fallback;
  if (['on', 'true', '1', 'yes'].includes(raw)) return true;
  if (['off', 'false', '0', 'no'].includes(raw)) return false;
  throw new ConfigError(`${name} must be "on" or "off", got "${env[name]}"`);
}

function oneOf(env: Env, name: string, fallback: string, allowed: string[]): string {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return fallback;
  if (!allowed.includes(raw)) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
  return raw;
}
