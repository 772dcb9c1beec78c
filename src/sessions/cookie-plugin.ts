import fastifyCookie from '@fastify/cookie';
import fastifyCsrf from '@fastify/csrf-protection';
import type { FastifyInstance, onRequestHookHandler } from 'fastify';
import type { Config } from '../config.js';
import type { PolicyLayer } from '../http/route-policy.js';
import { CSRF_SECRET_COOKIE, csrfCookieOptions } from './cookies.js';

/**
 * Cookies and CSRF protection for the routes of one scope (/api/auth): some of them set cookies,
 * and those whose policy is cookie read them. Registered in that scope only, so no other request
 * runs the cookie plugin's hooks.
 */
export async function registerCookies(scope: FastifyInstance, config: Config): Promise<void> {
  // hook: false: the plugin would parse every request's cookies; cookieParsing parses a cookie
  // route's, and only after the limits have let the request through.
  await scope.register(fastifyCookie, { secret: config.csrfSecret, hook: false });
  await scope.register(fastifyCsrf, {
    cookieKey: CSRF_SECRET_COOKIE,
    cookieOpts: csrfCookieOptions(config),
    getToken: (request) => {
      const value = request.headers['x-csrf-token'];
      return typeof value === 'string' ? value : undefined;
    },
  });
}

/**
 * The `cookies` layer (http/route-policy.ts): a route whose policy is cookie gets request.cookies,
 * parsed by the cookie plugin of the scope the route is declared in.
 */
export const cookieParsing: PolicyLayer = ({ auth }, route, scope) => {
  if (auth !== 'cookie') return undefined;
  // Outside a scope with the plugin every call would fail; stop start-up instead.
  if (!scope.hasDecorator('parseCookie'))
    throw new Error(`cookie route ${route.url} is declared outside the scope of registerCookies`);
  const parse: onRequestHookHandler = (request, _reply, done) => {
    const header = request.headers.cookie;
    request.cookies = header === undefined ? {} : scope.parseCookie(header);
    done();
  };
  return { onRequest: [parse] };
};
