import { callerId } from '../http/caller.js';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import { sendAttachment } from '../attachments/serve.js';
import { Errors } from '../errors.js';
import { ALLOW, DAV_METHODS, METHODS } from './dav-methods.js';
import { pathOfUrl, segmentsOf, type Segments } from './dav-path.js';
import { davBody, type DavBody, type DavHeaders } from './dav-request.js';
import { davCopyMove } from './dav-copy-move.service.js';
import { davLock, davUnlock } from './dav-locks.service.js';
import { davProppatch } from './dav-props.service.js';
import { davGet, davPropfind } from './dav-read.service.js';
import { davDelete, davMkcol, davPut } from './dav-write.service.js';
import type { DavServices } from './dav.service.js';
import { XML_DECLARATION } from './xml.js';

const XML_TYPE = 'application/xml; charset=utf-8';

function multistatus(reply: FastifyReply, inner: string): FastifyReply {
  return reply
    .code(207)
    .type(XML_TYPE)
    .send(`${XML_DECLARATION}<D:multistatus xmlns:D="DAV:">${inner}</D:multistatus>`);
}

/** A header that is not one of Node's known ones may come as an array: the first value counts. */
function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function headersOf(request: FastifyRequest): DavHeaders {
  return {
    if: header(request, 'if'),
    ifMatch: request.headers['if-match'],
    ifNoneMatch: request.headers['if-none-match'],
    depth: header(request, 'depth')?.trim().toLowerCase(),
    destination: header(request, 'destination'),
    overwrite: header(request, 'overwrite'),
    timeout: header(request, 'timeout'),
    lockToken: /^\s*<([^>]+)>\s*$/.exec(header(request, 'lock-token') ?? '')?.[1],
  };
}

/** What each method's handler is given: the caller, the path's names, the headers and the unread body. */
interface DavCall {
  ownerId: string;
  segments: Segments;
  headers: DavHeaders;
  body: DavBody;
}

/**
 * WebDAV at /dav/ (docs/features.md, "Use Vellum from other apps"). Each handler reads its request, calls one
 * service (dav-*.service.ts) and writes the answer; bodies are left unparsed by Fastify and read by
 * the services when they get to them, each within its limit.
 */
export const davRoutes: FastifyPluginAsync<{ services: DavServices }> = async (
  app: FastifyInstance,
  { services: s },
) => {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));

  type Handler = (call: DavCall, request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>;
  const handlers: Record<string, Handler> = {
    async GET({ ownerId, segments, headers }, request, reply) {
      const outcome = await davGet(s, ownerId, segments, headers);
      if (outcome.kind === 'listing') return reply.type('text/html; charset=utf-8').send(outcome.html);
      reply.header('last-modified', outcome.lastModified);
      if (outcome.kind === 'not-modified') return reply.code(304).header('etag', outcome.etag).send();
      if (outcome.kind === 'file') return sendAttachment(s.attachments, request, reply, outcome.file, outcome.etag);
      return reply
        .header('etag', outcome.etag)
        .header('accept-ranges', 'none')
        .type(outcome.contentType)
        .header('content-length', String(outcome.bytes.length))
        .send(outcome.bytes);
    },
    async PUT({ ownerId, segments, headers, body }, _request, reply) {
      const outcome = await davPut(s, ownerId, segments, headers, body);
      if (outcome.etag !== undefined) reply.header('etag', outcome.etag);
      return reply.code(outcome.status).send();
    },
    async DELETE({ ownerId, segments, headers }, _request, reply) {
      await davDelete(s, ownerId, segments, headers);
      return reply.code(204).send();
    },
    async MKCOL({ ownerId, segments, headers, body }, _request, reply) {
      await davMkcol(s, ownerId, segments, headers, body);
      return reply.code(201).send();
    },
    async COPY({ ownerId, segments, headers }, _request, reply) {
      return reply.code(await davCopyMove(s, ownerId, segments, headers, false)).send();
    },
    async MOVE({ ownerId, segments, headers }, _request, reply) {
      return reply.code(await davCopyMove(s, ownerId, segments, headers, true)).send();
    },
    async PROPFIND({ ownerId, segments, headers, body }, _request, reply) {
      return multistatus(reply, await davPropfind(s, ownerId, segments, headers, body));
    },
    async PROPPATCH({ ownerId, segments, headers, body }, _request, reply) {
      return multistatus(reply, await davProppatch(s, ownerId, segments, headers, body));
    },
    async LOCK({ ownerId, segments, headers, body }, _request, reply) {
      const outcome = await davLock(s, ownerId, segments, headers, body);
      if (outcome.token === undefined) return reply.type(XML_TYPE).send(outcome.xml);
      return reply.code(outcome.status).header('lock-token', `<${outcome.token}>`).type(XML_TYPE).send(outcome.xml);
    },
    async UNLOCK({ ownerId, segments, headers }, _request, reply) {
      await davUnlock(s, ownerId, segments, headers);
      return reply.code(204).send();
    },
  };
  handlers.HEAD = handlers.GET!;

  async function handler(request: FastifyRequest, reply: FastifyReply) {
    reply.header('dav', '1, 2');
    if (request.method === 'OPTIONS') {
      return reply
        .header('allow', ALLOW)
        .header('ms-author-via', 'DAV')
        .header('accept-ranges', 'bytes')
        .code(200)
        .send();
    }
    const ownerId = callerId(request);
    // A fragment never belongs in a request (litmus's delete_fragment): refused, not cut off.
    if (request.url.includes('#')) throw Errors.invalidDavRequest('The request path must not hold a fragment (#)');
    const segments = segmentsOf(pathOfUrl(request.url));
    return handlers[request.method]!(
      { ownerId, segments, headers: headersOf(request), body: davBody(request.body) },
      request,
      reply,
    );
  }

  for (const url of ['/dav', '/dav/*']) {
    app.route({
      method: METHODS as HTTPMethods[],
      url,
      handler,
      // Whole files go through here; each kind of body has its own limit (dav-request.ts, the services).
      bodyLimit: 2 ** 40,
      schema: { hide: true },
      config: { policy: { auth: 'dav', noStore: true } },
    });
  }
};

/** The methods WebDAV adds to HTTP, for Fastify's router (before the routes). */
export function addDavMethods(app: FastifyInstance): void {
  for (const method of DAV_METHODS) app.addHttpMethod(method, { hasBody: true });
}
