/**
 * The browser session of spec §5.9: the access token and the CSRF token live in memory only; the
 * refresh token is an HttpOnly cookie the browser sends to /api/auth/cookie/* by itself. Every API
 * call goes through `fetch` below, which adds the access token and, on a 401, refreshes once and
 * retries once. Refreshes are serialised across tabs with the Web Locks API so that two tabs never
 * spend one refresh token at the same time (the loser would get 401 "Invalid refresh token").
 */

export interface LockManagerLike {
  request<T>(name: string, callback: () => Promise<T>): Promise<T>;
}

export interface SessionOptions {
  /** The network (window.fetch in the browser, a fake in unit tests). */
  fetch: (request: Request) => Promise<Response>;
  /** navigator.locks when the browser has it. */
  locks?: LockManagerLike | undefined;
  /** Origin that relative URLs resolve against. */
  baseUrl: string;
  /**
   * False when no refresh cookie can exist (the view cookie says so): a call without a token then
   * goes as it is (an anonymous answer, or a 401 that refreshes) instead of refreshing first.
   */
  mayHaveSession?: () => boolean;
  /** Called when the session is gone for good (refresh refused twice): show the login screen. */
  onSignedOut?: () => void;
}

export const REFRESH_LOCK = 'vellum-refresh';

export class Session {
  private accessToken: string | null = null;
  private refreshing: Promise<boolean> | null = null;

  constructor(private readonly options: SessionOptions) {}

  get signedIn(): boolean {
    return this.accessToken !== null;
  }

  setAccessToken(token: string | null): void {
    this.accessToken = token;
  }

  /**
   * The session has ended elsewhere (signed out everywhere, password changed, account disabled),
   * learnt outside `fetch`: the login screen shows now, not at the next save.
   */
  ended(): void {
    this.accessToken = null;
    this.options.onSignedOut?.();
  }

  /** The access token for a request made outside `fetch` (an upload with progress); refreshed when `stale`. */
  async token(stale = false): Promise<string | null> {
    if (stale || this.accessToken === null) await this.refresh();
    return this.accessToken;
  }

  /**
   * Gets a new access token through the refresh cookie. One refresh at a time in this tab (callers
   * share the promise) and across tabs (the lock). A 401 from refresh is retried once: another tab
   * may have rotated the cookie between our CSRF call and our refresh, and the browser now holds
   * the new one (CONTRACT.md "Tokens and cookies").
   */
  refresh(): Promise<boolean> {
    if (this.refreshing === null) {
      const run = () => this.refreshOnce();
      const locks = this.options.locks;
      this.refreshing = (locks ? locks.request(REFRESH_LOCK, run) : run()).finally(() => {
        this.refreshing = null;
      });
    }
    return this.refreshing;
  }

  private async refreshOnce(): Promise<boolean> {
    // A token set while this refresh was on the way (a login on the page that started it) is newer
    // than anything the refresh could say: a failed refresh must not drop it.
    const before = this.accessToken;
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const csrfResponse = await this.options.fetch(this.request('/api/auth/cookie/csrf', { method: 'GET' }));
      unavailable(csrfResponse);
      const csrf = csrfResponse.headers.get('x-csrf-token');
      if (!csrfResponse.ok || csrf === null) {
        if (csrfResponse.status === 401 && attempt === 0) continue;
        break;
      }
      const response = await this.options.fetch(
        this.request('/api/auth/cookie/refresh', { method: 'POST', headers: { 'x-csrf-token': csrf } }),
      );
      unavailable(response);
      if (response.ok) {
        const body = (await response.json()) as { access_token: string };
        this.accessToken = body.access_token;
        return true;
      }
      if (response.status !== 401) break;
    }
    if (this.accessToken !== before) return true;
    this.accessToken = null;
    return false;
  }

  /**
   * Sends an API request with the access token; on 401 refreshes and sends it again once. A
   * request that still answers 401 ends the session (the login screen shows).
   */
  fetch = async (input: Request): Promise<Response> => {
    const retry = input.clone();
    if (this.accessToken === null && !isPublic(input.url) && this.options.mayHaveSession?.() !== false)
      await this.refresh();
    const response = await this.options.fetch(this.authorize(input));
    if (response.status !== 401 || isPublic(input.url) || (await isWrongPassword(response))) return response;
    if (!(await this.refresh())) {
      this.options.onSignedOut?.();
      return response;
    }
    const second = await this.options.fetch(this.authorize(retry));
    if (second.status === 401) {
      this.accessToken = null;
      this.options.onSignedOut?.();
    }
    return second;
  };

  private authorize(request: Request): Request {
    if (this.accessToken !== null) request.headers.set('authorization', `Bearer ${this.accessToken}`);
    return request;
  }

  private request(path: string, init: RequestInit): Request {
    return new Request(new URL(path, this.options.baseUrl), { ...init, credentials: 'same-origin' });
  }
}

/**
 * A refresh the server could not answer now (5xx: a deploy, the database away; 429: too many at
 * once) says nothing about the session: it fails like the network (a TypeError, as fetch's own),
 * so callers keep the token and try again later, instead of showing the login screen.
 */
function unavailable(response: Response): void {
  if (response.status >= 500 || response.status === 429)
    throw new TypeError(`Failed to fetch: the token refresh answered ${response.status}`);
}

/**
 * A 401 "Invalid credentials" from a route that checks the password again (change password, delete
 * account), "reauthentication_required" from a sensitive change whose password was missing or
 * wrong, or a wrong one-time code, is the answer to a typo, not an expired token: refreshing would
 * not help, and treating it as a lost session would sign the user out.
 */
async function isWrongPassword(response: Response): Promise<boolean> {
  try {
    const body: unknown = await response.clone().json();
    const code = typeof body === 'object' && body !== null ? (body as { code?: unknown }).code : undefined;
    return code === 'invalid_credentials' || code === 'invalid_mfa_code' || code === 'reauthentication_required';
  } catch {
    return false;
  }
}

/** Routes that take no access token: a 401 there is an answer (wrong password), not an expiry. */
function isPublic(url: string): boolean {
  const path = new URL(url).pathname;
  return (
    path === '/api/auth/login' ||
    path === '/api/auth/signup' ||
    path.startsWith('/api/auth/cookie/') ||
    path.startsWith('/api/auth/passkey/') ||
    path.startsWith('/api/auth/password-rules')
  );
}
