import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Errors } from '../errors.js';
import { sendError } from '../http/problem.js';

/** Where `vite build` writes the client (vite.config.ts); the same place from src/ and from dist/. */
export const DEFAULT_WEB_ROOT = fileURLToPath(new URL('../../dist/public/', import.meta.url));

/**
 * The client's pages may run only the service's own scripts and styles and talk only to it. No
 * 'unsafe-inline' anywhere: Vite emits the entry as an external module and styles as files.
 * img-src allows data: so that an image pasted as a data URL into a note still shows, and blob: for
 * attachments, which the client fetches with the access token and shows as object URLs; every
 * remote image stays blocked (notes cannot track their readers).
 */
export const CLIENT_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The same policy letting images from other sites (http: and https:) load, for a page loaded with
 * `?remote-images=on`: a reader allowed a note's images from other sites (web/src/markdown/remote-images.ts),
 * and the client still loads only the images of notes so allowed. Everything else stays as strict.
 */
export const CLIENT_CSP_REMOTE_IMAGES = CLIENT_CSP.replace(
  "img-src 'self' data: blob:",
  "img-src 'self' data: blob: http: https:",
);

const API_PREFIXES = ['/api', '/healthz', '/readyz', '/metrics'];

function isServicePath(pathname: string): boolean {
  return API_PREFIXES.some((prefix) => pathname === prefix || pathname.startsWith(`${prefix}/`));
}

/**
 * Serves the web client: hashed files under /assets/ are cached for a year, everything else
 * (index.html, and index.html again for every client-side route so links survive a reload) is
 * revalidated on each load. Paths of the API keep their own 404.
 */
export async function webRoutes(app: FastifyInstance, options: { root: string }): Promise<void> {
  const root = path.resolve(options.root);
  const indexPath = path.join(root, 'index.html');
  // The build writes .br and .gz copies (web/compress-plugin.ts): sent as they are when the browser
  // accepts them, with Vary: Accept-Encoding.
  await app.register(fastifyStatic, { root, serve: false, preCompressed: true });

  const serve = async (request: FastifyRequest, reply: FastifyReply) => {
    const pathname = request.url.split('?', 1)[0]!;
    if (isServicePath(pathname)) return reply.callNotFound();
    const query = new URLSearchParams(request.url.slice(pathname.length + 1));
    reply.header(
      'content-security-policy',
      query.get('remote-images') === 'on' ? CLIENT_CSP_REMOTE_IMAGES : CLIENT_CSP,
    );
    // A shared note's page (/s/{token}): nobody's to index, and its address must not leak onwards.
    if (pathname.startsWith('/s/')) reply.header('x-robots-tag', 'noindex').header('referrer-policy', 'no-referrer');
    if (pathname.startsWith('/assets/')) {
      // A stale page asking for an asset that a newer build replaced gets a plain 404, never HTML.
      return reply.sendFile(pathname.slice(1), root, { maxAge: '365d', immutable: true, cacheControl: true });
    }
    const file = safeFile(root, pathname);
    if (file !== undefined) {
      return reply.header('cache-control', 'no-cache').sendFile(file, root, { cacheControl: false });
    }
    if (!fs.existsSync(indexPath)) {
      // An API-only build (tests, or `tsc` without `vite build`): client paths are simply not here.
      return sendError(reply, Errors.webClientNotBuilt());
    }
    return reply
      .header('cache-control', 'no-cache')
      .type('text/html; charset=utf-8')
      .sendFile('index.html', root, { cacheControl: false });
  };
  // Pages, not API: kept out of the OpenAPI document.
  app.get('/', { schema: { hide: true }, config: { policy: { auth: 'public' } } }, serve);
  app.get('/*', { schema: { hide: true }, config: { policy: { auth: 'public' } } }, serve);
}

/** A top-level file of the build (favicon, robots.txt) other than index.html, if it exists. */
function safeFile(root: string, pathname: string): string | undefined {
  const name = pathname.slice(1);
  if (name === '' || name === 'index.html' || !/^[A-Za-z0-9._-]+$/.test(name) || name.startsWith('.')) return undefined;
  try {
    return fs.statSync(path.join(root, name)).isFile() ? name : undefined;
  } catch {
    return undefined;
  }
}
