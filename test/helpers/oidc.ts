/// <reference path="./oidc-provider.d.ts" />
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

/**
 * A real OpenID Connect provider (oidc-provider from npm) on a local port, with its development
 * login form (any password) and consent page, for one test file. Accounts are looked up in
 * `accounts` by the login typed at its form; `groups` is a claim of the profile scope.
 */
export interface TestProvider {
  issuer: string;
  /**
   * The next answer of the token endpoint carries this ID token in place of the one the provider
   * made: a provider (or a man in the middle) that hands over a token meant for someone else.
   */
  swapNextIdToken(idToken: string): void;
  close(): Promise<void>;
}

export interface ProviderAccount {
  preferred_username?: string;
  email?: string;
  groups?: string[];
}

export const CLIENT_ID = 'vellum';
export const CLIENT_SECRET = 'vellum-test-client-secret-0123456789abcdef';
export const OTHER_CLIENT_ID = 'another-app';

export async function startProvider(
  redirectUri: string,
  accounts: Record<string, ProviderAccount>,
): Promise<TestProvider> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = (id: string) => ({
    client_id: id,
    client_secret: `${CLIENT_SECRET}-${id === CLIENT_ID ? '' : id}`.replace(/-$/, ''),
    redirect_uris: [redirectUri],
    grant_types: ['authorization_code'],
    response_types: ['code'],
  });
  const provider = new Provider(issuer, {
    clients: [client(CLIENT_ID), client(OTHER_CLIENT_ID)],
    claims: {
      openid: ['sub'],
      profile: ['preferred_username', 'groups'],
      email: ['email', 'email_verified'],
    },
    findAccount: async (_ctx: unknown, sub: string) => ({
      accountId: sub,
      claims: async () => ({ sub, ...(accounts[sub] ?? {}), email_verified: accounts[sub]?.email !== undefined }),
    }),
    cookies: { keys: ['test-provider-cookie-key-0123456789'] },
    features: { devInteractions: { enabled: true } },
    pkce: { required: () => true },
    // Set, so that the provider does not warn about its defaults on every login.
    ttl: { AccessToken: 600, AuthorizationCode: 60, Grant: 600, IdToken: 600, Interaction: 600, Session: 600 },
  });
  // Its own warnings (development interactions, in-memory adapter) are expected here.
  provider.on('server_error', () => {});
  const handle = provider.callback();
  let swap: string | undefined;
  server.on('request', (req, res) => {
    if (swap !== undefined && req.method === 'POST' && req.url?.startsWith('/token')) {
      const idToken = swap;
      swap = undefined;
      const end = res.end.bind(res) as (chunk?: unknown) => typeof res;
      res.end = ((chunk?: unknown) => {
        const body = JSON.parse(String(chunk)) as Record<string, unknown>;
        const changed = JSON.stringify({ ...body, id_token: idToken });
        if (!res.headersSent) res.setHeader('content-length', Buffer.byteLength(changed));
        return end(changed);
      }) as typeof res.end;
    }
    handle(req, res);
  });
  return {
    issuer,
    swapNextIdToken: (idToken) => {
      swap = idToken;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A browser's part at the provider, by hand: follows redirects (manually, keeping the provider's
 * cookies), signs in as `login` at the login form and confirms the consent page, until the provider
 * redirects to `redirectUri`; answers that URL (with code, state and iss).
 */
export async function signInAtProvider(authorizationUrl: string, login: string, redirectUri: string): Promise<URL> {
  const jar = new Map<string, string>();
  const remember = (res: Response) => {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      jar.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1));
    }
  };
  const cookieHeader = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  let url = authorizationUrl;
  let body: URLSearchParams | undefined;
  for (let step = 0; step < 20; step += 1) {
    if (url.startsWith(redirectUri)) return new URL(url);
    const res = await fetch(url, {
      method: body === undefined ? 'GET' : 'POST',
      redirect: 'manual',
      headers: {
        cookie: cookieHeader(),
        ...(body === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
      },
      ...(body === undefined ? {} : { body }),
    });
    remember(res);
    body = undefined;
    if (res.status >= 300 && res.status < 400) {
      url = new URL(res.headers.get('location')!, url).href;
      continue;
    }
    const html = await res.text();
    if (res.status !== 200) throw new Error(`provider answered ${res.status}: ${html.slice(0, 500)}`);
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    const prompt = /name="prompt" value="([a-z]+)"/.exec(html)?.[1];
    if (action === undefined || prompt === undefined) throw new Error(`no form at the provider: ${html.slice(0, 500)}`);
    url = new URL(action.replaceAll('&amp;', '&'), url).href;
    body =
      prompt === 'login'
        ? new URLSearchParams({ prompt, login, password: 'any password' })
        : new URLSearchParams({ prompt });
  }
  throw new Error('the provider never redirected back');
}
