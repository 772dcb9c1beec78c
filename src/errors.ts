import { CONTENT_MAX_BYTES, FOLDER_MAX_DEPTH, FOLDERS_MAX, TITLE_MAX_CHARACTERS } from './limits.js';

/**
 * Domain errors: services throw these, and src/http/error-handler.ts is the one place that turns
 * them (and every other error) into application/problem+json.
 */
export class AppError extends Error {
  override name = 'AppError';
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly extensions: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    // An AppError is an answer, not a fault: nothing reads its stack, and capturing one was a
    // visible cost where many are thrown (404s, logins shed under a flood).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(detail);
    Error.stackTraceLimit = limit;
  }
}

/**
 * An unexpected failure of one step that spec §7 names apart from the rest of its route (refresh:
 * "Failed to revoke token", then "Failed to generate tokens"). It is answered like its cause (500,
 * or 503 when the database is down) with this detail in place of the route's failureDetail.
 */
export class StepFailure extends Error {
  override name = 'StepFailure';
  constructor(
    readonly detail: string,
    cause: unknown,
  ) {
    super(detail, { cause });
  }
}

const make = (status: number, code: string, detail: string) => () => new AppError(status, code, detail);

/** Every error the service can answer with, in one catalogue. Details are the spec's messages. */
export const Errors = {
  invalidBody: make(400, 'invalid_request_body', 'Invalid request body'),
  validation: (detail: string) => new AppError(400, 'validation_failed', detail),
  /** Checked before any parsing (shared/json-depth.ts): parsing is what such a body costs. */
  nestedTooDeep: (limit: number) =>
    new AppError(400, 'body_too_deep', `Invalid request body: nested deeper than ${limit} levels`),
  invalidUserId: make(400, 'invalid_user_id', 'Invalid user ID'),
  resourceIdMissing: make(400, 'resource_id_missing', 'Resource ID missing'),
  invalidNoteId: make(400, 'invalid_note_id', 'Invalid note ID'),
  invalidVersionId: make(400, 'invalid_version_id', 'Invalid version ID'),
  invalidSessionId: make(400, 'invalid_session_id', 'Invalid session ID'),
  invalidQuery: (detail: string) => new AppError(400, 'invalid_query', detail),
  /** A search over its time budget: the query, not the load, decides it (see search.runner.ts). */
  queryTooExpensive: (seconds: number) =>
    new AppError(
      400,
      'query_too_expensive',
      `This search needs more than ${seconds} s of work; search for rarer words or a shorter phrase`,
    ),
  invalidCredentials: make(401, 'invalid_credentials', 'Invalid credentials'),
  unauthorized: make(401, 'unauthorized', 'Unauthorized'),
  notAuthenticated: make(401, 'not_authenticated', 'Not authenticated'),
  invalidToken: make(401, 'invalid_token', 'Invalid token'),
  invalidRefreshToken: make(401, 'invalid_refresh_token', 'Invalid refresh token'),
  mfaRequired: make(401, 'mfa_required', 'A one-time code from your authenticator app or a recovery code is required'),
  invalidMfaCode: make(401, 'invalid_mfa_code', 'That code is wrong or was already used'),
  /** A sensitive change asked for the password again (auth/reauthentication.service.ts) and got none or a wrong one. */
  reauthenticationRequired: make(401, 'reauthentication_required', 'Confirm it is you: this needs your password again'),
  passkeyChallenge: make(400, 'passkey_challenge', 'This passkey request expired or was already used; start again'),
  passkeyRejected: make(400, 'passkey_rejected', 'The passkey could not be verified (user verification is required)'),
  passkeyExists: make(409, 'passkey_exists', 'This passkey is already registered'),
  passkeyNotFound: make(404, 'passkey_not_found', 'Passkey not found'),
  tokenNotFound: make(404, 'token_not_found', 'Token not found'),
  shareNotFound: make(404, 'share_not_found', 'Share not found'),
  totpEnabled: make(409, 'totp_enabled', 'An authenticator app is already set up; turn it off first'),
  totpNotStarted: make(409, 'totp_not_started', 'Start setting up the authenticator app first'),
  totpNotEnabled: make(409, 'totp_not_enabled', 'No authenticator app is set up'),
  forbidden: make(403, 'forbidden', 'Forbidden'),
  /**
   * A personal access token, valid and live, without the scope this request needs (issue #42): it is
   * not a failed sign-in, so 403, naming the scope (and as RFC 6750 says it, in WWW-Authenticate).
   */
  insufficientScope: (scope: string) =>
    new AppError(
      403,
      'insufficient_scope',
      `This access token does not have the ${scope} scope, which this request needs; make a token with it in Account, Access tokens`,
      { required_scope: scope },
      { 'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${scope}"` },
    ),
  /** PASSWORD_LOGIN=off, for an account that is not an administrator (after its password was checked). */
  passwordLoginDisabled: make(
    403,
    'password_login_disabled',
    'Signing in with a password is turned off on this server; use single sign-on or a passkey',
  ),
  /** PASSWORD_LOGIN=off: a sign-up with a password would make an account no password signs in to (not an administrator's). */
  passwordSignupDisabled: make(
    403,
    'password_login_disabled',
    'Signing up with a password is turned off on this server; sign up with single sign-on',
  ),
  /** A password-reset or e-mail confirmation link that is unknown, expired or already used. */
  invalidLink: make(400, 'invalid_link', 'This link is invalid, has expired or was already used; ask for a new one'),
  invalidEmail: make(
    400,
    'invalid_email',
    'Not a valid e-mail address (like name@example.com, at most 254 characters)',
  ),
  emailTaken: make(409, 'email_taken', 'This e-mail address already belongs to another account'),
  mailUnavailable: make(
    409,
    'mail_unavailable',
    'This server sends no e-mail (SMTP_URL is not set), so an address cannot be confirmed; ask an administrator',
  ),
  oidcDisabled: make(404, 'oidc_disabled', 'Single sign-on is not set up on this server'),
  /** The provider's answer failed a check (state, nonce, code, issuer, audience, signature…): `detail` says which. */
  oidcRefused: (detail: string) => new AppError(400, 'oidc_refused', `Single sign-on failed: ${detail}`),
  oidcUnavailable: make(502, 'oidc_unavailable', 'The single sign-on provider could not be reached; try again later'),
  /** Single sign-on of someone with no account while sign-up is closed (SIGNUP=closed). */
  oidcSignupClosed: make(
    403,
    'signup_closed',
    'Sign-up is closed: an administrator must create or invite your account before you can sign in',
  ),
  /** Single sign-on of someone with no account, under SIGNUP=invite, without an invitation carried through. */
  oidcInvitationRequired: make(
    403,
    'invitation_required',
    'You need an invitation to join this server: open the invitation link an administrator sent you and sign in from there',
  ),
  invalidCsrf: make(403, 'invalid_csrf_token', 'Invalid CSRF token'),
  originNotAllowed: make(403, 'origin_not_allowed', 'Origin not allowed'),
  userNotFound: make(404, 'user_not_found', 'User not found'),
  noteNotFound: make(404, 'note_not_found', 'Note not found'),
  versionNotFound: make(404, 'version_not_found', 'Version not found'),
  sessionNotFound: make(404, 'session_not_found', 'Session not found'),
  folderNotFound: make(404, 'folder_not_found', 'Folder not found'),
  attachmentNotFound: make(404, 'attachment_not_found', 'Attachment not found'),
  attachmentReferenced: make(
    409,
    'attachment_referenced',
    'A version of a note links to this attachment; remove the link (and let the old versions go) first',
  ),
  rangeNotSatisfiable: (size: number) =>
    new AppError(
      416,
      'range_not_satisfiable',
      'The requested range is outside the file',
      {},
      { 'content-range': `bytes */${size}` },
    ),
  folderNameTaken: make(409, 'folder_name_taken', 'A folder with this name already exists here'),
  folderCycle: make(409, 'folder_cycle', 'A folder cannot be moved into itself or below itself'),
  folderTooDeep: make(409, 'folder_too_deep', `Folders nest at most ${FOLDER_MAX_DEPTH} levels deep`),
  folderLimit: make(409, 'folder_limit', `An account holds at most ${FOLDERS_MAX.toLocaleString('en')} folders`),
  importExisting: (count: number) =>
    new AppError(
      409,
      'import_existing',
      `${count === 1 ? '1 note' : `${count} notes`} of this import ${count === 1 ? 'is' : 'are'} already here (imported before); nothing was imported: import again with existing=skip or existing=copy`,
      { existing: count },
    ),
  importRace: make(
    409,
    'import_conflict',
    'A folder this import creates was created at the same time by another request; nothing was imported, import again',
  ),
  usernameTaken: make(409, 'username_taken', 'Username is already in use'),
  lastAdministrator: make(409, 'last_administrator', 'Cannot delete the last administrator'),
  /** PATCH /auth/admin/{id}: the last enabled administrator cannot be demoted or disabled. */
  lastAdministratorChange: make(
    409,
    'last_administrator',
    'Cannot demote or disable the last administrator; make another account an administrator first',
  ),
  // Sign-up modes (SIGNUP) and invitations.
  signupClosed: make(403, 'signup_closed', 'Sign-up is closed on this server; an administrator creates accounts'),
  invitationRequired: make(
    403,
    'invitation_required',
    'Sign-up needs a valid invitation on this server (this one is unknown, used, revoked or expired)',
  ),
  invitationNotFound: make(404, 'invitation_not_found', 'Invitation not found'),
  setupLinkInvalid: make(
    400,
    'setup_link_invalid',
    'This set-up link is not valid: it was used, replaced or has expired; ask an administrator for a new one',
  ),
  accountHasPassword: make(
    409,
    'account_has_password',
    'This account already has a password; a set-up link is only for accounts that have none',
  ),
  /** REQUIRE_SECOND_FACTOR: the account must set up a second factor before anything else. */
  mfaEnrolmentRequired: make(
    403,
    'mfa_enrolment_required',
    'This server requires a second factor: set up an authenticator app or a passkey first',
  ),
  versionLimit: make(
    409,
    'version_limit',
    'The note has reached the highest version number (2147483647) and takes no more versions; copy it into a new note to keep editing',
  ),
  versionMismatch: (current: number) =>
    new AppError(
      412,
      'version_mismatch',
      `The note has changed: its current version is ${current}`,
      {
        current_version: current,
      },
      { etag: `"${current}"` },
    ),
  /** A save with ?merge=true whose changes overlap the current version's (notes/merge.ts has the conflicts' shape). */
  mergeConflict: (current: number, conflicts: unknown[]) =>
    new AppError(
      409,
      'merge_conflict',
      `Your changes and the note's current version (${current}) change the same lines; nothing was saved`,
      {
        current_version: current,
        conflicts,
      },
    ),
  contentTooLarge: (detail: string) => new AppError(413, 'content_too_large', detail),
  tooManyRequests: (retryAfterSeconds: number) =>
    new AppError(
      429,
      'too_many_requests',
      `Too many requests; retry in ${retryAfterSeconds} seconds`,
      {
        retry_after: retryAfterSeconds,
      },
      { 'retry-after': String(retryAfterSeconds) },
    ),
  busy: (retryAfterSeconds: number) =>
    new AppError(503, 'busy', 'The server is busy; retry shortly', {}, { 'retry-after': String(retryAfterSeconds) }),
  tooManyStreams: (perUser: number) =>
    new AppError(
      429,
      'too_many_streams',
      `At most ${perUser} event streams at once; close another first`,
      {},
      { 'retry-after': '5' },
    ),

  // What Fastify refuses before a handler runs (http/error-handler.ts).
  /** No route at the path (any method). */
  routeNotFound: (method: string, path: string) =>
    new AppError(404, 'route_not_found', `No route for ${method} ${path}`),
  /** A route at the path, not for this method: `allowed` are the methods it takes. */
  methodNotAllowed: (method: string, allowed: readonly string[]) =>
    new AppError(
      405,
      'method_not_allowed',
      `Method ${method} is not allowed here; use ${allowed.join(', ')}`,
      {},
      { allow: allowed.join(', ') },
    ),
  /** An unexpected failure: `detail` is the route's own words when it has them (spec §7). */
  internal: (detail = 'Internal Server Error') => new AppError(500, 'internal_error', detail),
  /** The database does not answer (an outage, not a fault of the request). */
  databaseUnavailable: (detail = 'Service temporarily unavailable') =>
    new AppError(503, 'database_unavailable', detail, {}, { 'retry-after': '5' }),
  /** GET /readyz: the schema is behind the code. */
  notMigrated: () =>
    new AppError(503, 'not_migrated', 'Database migrations are not applied', {}, { 'retry-after': '5' }),
  /** GET /readyz while the process drains before it stops. */
  shuttingDown: () => new AppError(503, 'shutting_down', 'Shutting down', {}, { 'retry-after': '5' }),
  /** GET /readyz while the database cannot grow: a balancer sends writes elsewhere. */
  notReadyStorageFull: () =>
    new AppError(503, 'storage_full', 'Storage is full: writes fail until space is freed', {}, { 'retry-after': '30' }),
  /** A path the web client would serve, when the client was not built (an API-only build). */
  webClientNotBuilt: make(
    404,
    'web_client_not_built',
    'The web client is not built: run `npm run build` (npm start does it for you)',
  ),

  // Refused before routing (http/framework-errors.ts) or by Node's HTTP parser (http/client-error.ts).
  badUrl: make(400, 'bad_url', 'Malformed URL'),
  uriTooLong: make(414, 'uri_too_long', 'URL path segment too long'),
  requestTimeout: make(408, 'request_timeout', 'The request did not arrive in time'),
  headersTooLarge: make(431, 'headers_too_large', 'Request headers are too large'),
  chunkExtensionsTooLarge: make(413, 'body_too_large', 'Chunk extensions are too large'),
  malformedRequest: make(400, 'bad_request', 'Malformed HTTP request'),

  bodyTooLarge: make(413, 'body_too_large', 'Request body is too large'),
  unsupportedMediaType: (detail: string) => new AppError(415, 'unsupported_media_type', detail),
  requestRefused: (status: number) =>
    new AppError(status, 'bad_request', status === 400 ? 'Bad request' : `Request refused (${status})`),

  /** The server's disk (the database's) is full: nothing of the change was saved (http/error-handler.ts). */
  storageFull: () =>
    new AppError(
      507,
      'storage_full',
      "The server's storage is full, so the change was not saved; retry later (the administrator has been told in the log)",
      {},
      { 'retry-after': '30' },
    ),
  quotaExceeded: (used: string, quota: string) =>
    new AppError(
      413,
      'quota_exceeded',
      `Not enough storage left: ${used} of ${quota} used; delete attachments you no longer need`,
    ),
  memberNotFound: make(404, 'member_not_found', 'Member not found'),
  memberIsOwner: make(409, 'member_is_owner', 'You own this note: it is already yours'),
  membersLimit: (max: number) => new AppError(409, 'members_limit', `A note can be shared with at most ${max} people`),
  memberExists: (username: string) =>
    new AppError(409, 'member_exists', `This note is already shared with ${username}`),
  invalidImport: (reason: string) => new AppError(400, 'invalid_import', `Invalid import document: ${reason}`),
  /** An error of this catalogue that a worker thread answered with: threads pass plain data, so it is made again here. */
  relayed: (error: { status: number; code: string; detail: string }) =>
    new AppError(error.status, error.code, error.detail),

  // WebDAV (src/dav/): answered as problems like the rest; a 401 names Basic, a 405 what the collection allows.
  davUnauthorized: () =>
    new AppError(
      401,
      'unauthorized',
      'Unauthorized',
      {},
      { 'www-authenticate': 'Basic realm="Vellum", charset="UTF-8"' },
    ),
  davNotFound: make(404, 'dav_not_found', 'Nothing is at this path'),
  davNoParent: make(409, 'dav_conflict', 'The folder this path is in does not exist'),
  davConflict: (detail: string) => new AppError(409, 'dav_conflict', detail),
  /** `headers`: a read's 412 still names the resource's Last-Modified. */
  davPreconditionFailed: (headers: Record<string, string> = {}) =>
    new AppError(
      412,
      'precondition_failed',
      'A precondition (If, If-Match, If-None-Match or Overwrite) does not hold',
      {},
      headers,
    ),
  invalidDavRequest: (detail: string) => new AppError(400, 'invalid_dav_request', detail),
  invalidDavPath: (detail: string) => new AppError(400, 'invalid_dav_path', detail),
  davForbidden: (detail: string) => new AppError(403, 'dav_forbidden', detail),
  propfindFiniteDepth: make(403, 'propfind_finite_depth', 'PROPFIND needs Depth: 0 or 1 (infinity is refused)'),
  invalidIfHeader: make(400, 'invalid_if_header', 'The If header is malformed (RFC 4918, section 10.4)'),
  invalidXml: (reason: string) =>
    new AppError(400, 'invalid_xml', `The request body is not valid WebDAV XML: ${reason}`),
  davLocked: make(423, 'locked', 'The resource is locked; send the lock token in the If header'),
  davAlreadyLocked: make(423, 'locked', 'The resource is already locked'),
  lockTokenMismatch: make(409, 'lock_token_mismatch', 'No lock with this token applies to this path'),
  mkcolBody: make(415, 'unsupported_media_type', 'MKCOL takes no body'),
  /** `allow`: what the collection there allows (dav/dav-methods.ts). */
  davPathTaken: (allow: string) =>
    new AppError(405, 'method_not_allowed', 'Something already exists at this path', {}, { allow }),
  davPutCollection: (allow: string) =>
    new AppError(405, 'method_not_allowed', 'A collection cannot be written with PUT', {}, { allow }),
  davNotUtf8: make(415, 'not_utf8', 'A .md file is a note and must be UTF-8 text'),
  davNoteTooLarge: make(
    413,
    'content_too_large',
    `A .md file is a note and must be at most ${CONTENT_MAX_BYTES} bytes (1 MiB)`,
  ),
  davNoteNameTooLong: make(
    400,
    'invalid_dav_name',
    `A note's name must be at most ${TITLE_MAX_CHARACTERS} characters before .md`,
  ),
  davFileNameTooLong: make(400, 'invalid_dav_name', 'A file name must be at most 255 characters'),
} as const;
