import * as client from 'openid-client';
import type { OidcConfig } from '../config.js';
import { AppError, Errors } from '../errors.js';

/** What a login round trip keeps between /oidc/login and /oidc/callback (in a signed cookie). */
export interface PendingLogin {
  state: string;
  nonce: string;
  verifier: string;
  /** An invitation token the person came with (/signup?invitation=…), used when the account is created. */
  invitation?: string;
}

export interface OidcClaims {
  issuer: string;
  subject: string;
  /** The ID token's claims, with the UserInfo answer's on top (providers put groups in either). */
  claims: Record<string, unknown>;
}

/**
 * The relying party: openid-client (v6) against the configured issuer. The provider's metadata is
 * discovered on first use and kept; a failed discovery is tried again on the next login.
 */
export class OidcClient {
  private discovered: Promise<client.Configuration> | undefined;

  constructor(
    readonly config: OidcConfig,
    readonly redirectUri: string,
  ) {}

  private configuration(): Promise<client.Configuration> {
    if (this.discovered === undefined) {
      const options: client.DiscoveryRequestOptions =
        new URL(this.config.issuer).protocol === 'http:' ? { execute: [client.allowInsecureRequests] } : {};
      this.discovered = client
        .discovery(new URL(this.config.issuer), this.config.clientId, this.config.clientSecret, undefined, options)
        .catch((error: unknown) => {
          this.discovered = undefined;
          throw error;
        });
    }
    return this.discovered;
  }

  /** The provider's authorization URL (code flow, PKCE S256, state, nonce) and what the callback must find. */
  async start(): Promise<{ url: string; pending: PendingLogin }> {
    const configuration = await this.configuration().catch(() => {
      throw Errors.oidcUnavailable();
    });
    const pending = {
      state: client.randomState(),
      nonce: client.randomNonce(),
      verifier: client.randomPKCECodeVerifier(),
    };
    const url = client.buildAuthorizationUrl(configuration, {
      redirect_uri: this.redirectUri,
      scope: this.config.scopes,
      state: pending.state,
      nonce: pending.nonce,
      code_challenge: await client.calculatePKCECodeChallenge(pending.verifier),
      code_challenge_method: 'S256',
    });
    return { url: url.href, pending };
  }

  /**
   * Trades the code for tokens and checks everything openid-client checks: state, the `iss` of the
   * answer (RFC 9207) and of the ID token, audience, signature, expiry, nonce, PKCE. Any failure is
   * 400 oidc_refused naming it; a provider that cannot be reached is 502.
   */
  async finish(currentUrl: URL, pending: PendingLogin): Promise<OidcClaims> {
    const configuration = await this.configuration().catch(() => {
      throw Errors.oidcUnavailable();
    });
    try {
      const tokens = await client.authorizationCodeGrant(configuration, currentUrl, {
        pkceCodeVerifier: pending.verifier,
        expectedState: pending.state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
      const idClaims = tokens.claims();
      if (idClaims === undefined) throw Errors.oidcRefused('the provider sent no ID token');
      let userinfo: Record<string, unknown> = {};
      if (configuration.serverMetadata().userinfo_endpoint !== undefined) {
        userinfo = { ...(await client.fetchUserInfo(configuration, tokens.access_token, idClaims.sub)) };
      }
      return {
        issuer: idClaims.iss,
        subject: idClaims.sub,
        claims: { ...idClaims, ...userinfo },
      };
    } catch (error) {
      throw refusal(error);
    }
  }
}

function refusal(error: unknown): Error {
  if (error instanceof client.AuthorizationResponseError || error instanceof client.ResponseBodyError) {
    return Errors.oidcRefused(
      `the provider answered ${error.error}${error.error_description ? ` (${error.error_description})` : ''}`,
    );
  }
  if (error instanceof Error && 'code' in error && typeof error.code === 'string' && error.code.startsWith('OAUTH_')) {
    // openid-client's own message is generic ("invalid response encountered"); its cause names the check.
    const cause = error.cause instanceof Error ? error.cause.message : '';
    return Errors.oidcRefused(cause !== '' ? cause : error.message);
  }
  if (error instanceof AppError) return error;
  // fetch failed, a time-out, a provider answering garbage: not the person's fault.
  return Errors.oidcUnavailable();
}
