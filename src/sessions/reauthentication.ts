import type { UserRow } from '../accounts/user.repository.js';
import type { EventKind } from '../audit/audit.service.js';
import type { Claims } from '../shared/claims.js';
import type { ClientInfo } from '../shared/client-info.js';

/**
 * What a request for a sensitive change carries to prove its sender is the account holder now, not
 * just the holder of an access token (ASVS 5.0 7.5.1): the password; for an account without one,
 * a current TOTP or recovery code, or a fresh assertion of one of its passkeys.
 */
export interface Reauthentication {
  password?: string | undefined;
  code?: string | undefined;
  /** The browser's WebAuthn assertion (schema-checked as shared/webauthn-schemas.ts says). */
  credential?: unknown;
}

/**
 * Checks the proof of a sensitive change by the caller (auth/reauthentication.service.ts, which
 * app.ts hands to the routes that ask: it checks second factors too, which sit above sessions).
 * Answers the caller's row; `kind` names the change in the audit trail.
 */
export type Reauthenticate = (
  caller: Claims,
  proof: Reauthentication,
  client: ClientInfo,
  kind: EventKind,
) => Promise<UserRow>;
