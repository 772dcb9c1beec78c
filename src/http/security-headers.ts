import type { FastifyInstance, FastifyReply, onSendHookHandler } from 'fastify';
import type { Config } from '../config.js';
import type { PolicyLayer } from './route-policy.js';

/**
 * Headers for a JSON API that no browser should render, frame or sniff. The API docs page
 * (/api/docs) replaces the Content-Security-Policy with its own in its plugin, which runs later.
 */
export function securityHeaders(config: Config): Record<string, string> {
  return {
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'content-security-policy': "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    'x-frame-options': 'DENY',
    'cross-origin-opener-policy': 'same-origin',
    // Only no-cors loads (<img>, <script>) are refused; fetches allowed by CORS are unaffected.
    'cross-origin-resource-policy': 'same-origin',
    // Production runs behind HTTPS (Secure cookies); over plain HTTP browsers ignore it anyway.
    ...(config.production ? { 'strict-transport-security': 'max-age=31536000; includeSubDomains' } : {}),
  };
}

export type HeaderList = ReadonlyArray<readonly [string, string]>;

/** The given headers where the reply has none of its own; no-store too when asked. */
export function applyHeaders(headers: HeaderList, reply: FastifyReply, noStore: boolean): void {
  for (const [name, value] of headers) if (!reply.hasHeader(name)) reply.header(name, value);
  if (noStore) reply.header('cache-control', 'no-store');
  reply.removeHeader('x-powered-by');
}

/** Security headers on every response, errors and 404s included. */
export function registerSecurityHeaders(app: FastifyInstance, config: Config, closing: () => boolean): void {
  const headers: HeaderList = Object.entries(securityHeaders(config));
  // Every header a response gets, in one synchronous hook: the request id, the security headers,
  // and Connection: close while shutting down (graceful-close.ts). onSend rather than onRequest:
  // it also runs for replies to requests refused during the onRequest hooks (throttling,
  // authentication), and for the not-found handler.
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('x-request-id', request.id);
    // A path that matches no route may be one that does (a typo of a token route): not kept either.
    applyHeaders(headers, reply, request.is404);
    // HTTP/2 has no Connection header (and closes streams, not connections).
    if (closing() && request.raw.httpVersionMajor < 2) reply.header('connection', 'close');
    done(null, payload);
  });
}

const setNoStore: onSendHookHandler = (_request, reply, payload, done) => {
  reply.header('cache-control', 'no-store');
  done(null, payload);
};

/** The `noStore` layer (route-policy.ts): Cache-Control: no-store where a route's policy asks for it. */
export const noStore: PolicyLayer = (policy) => (policy.noStore === true ? { onSend: [setNoStore] } : undefined);
