import { startAuthentication, WebAuthnError } from '@simplewebauthn/browser';
import { ApiError, errorMessage } from '../api/client';

// The browser's side of a passkey sign-in, a chunk of its own: fetched when someone uses a passkey,
// not by everyone who opens the login page.
export { startAuthentication };

/** What went wrong with a passkey, in words: the browser's own errors are technical or silent. */
export function passkeyMessage(error: unknown, action: 'sign in' | 'add it'): string {
  if (error instanceof WebAuthnError || (error instanceof Error && error.name === 'NotAllowedError')) {
    return action === 'sign in'
      ? 'Passkey sign-in was cancelled or timed out, or this device has no passkey for Vellum.'
      : 'Adding the passkey was cancelled or timed out, or this device already holds one for your account.';
  }
  if (error instanceof ApiError && error.status === 401 && action === 'sign in')
    return 'That passkey is not registered with Vellum any more.';
  return errorMessage(error);
}
