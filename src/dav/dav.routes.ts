import type { Readable } from 'node:stream';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import * as attachments from '../attachments/attachments.service.js';
import { sendAttachment } from '../attachments/serve.js';
import { AppError } from '../errors.js';
import { requireUserId } from '../http/access.js';
import { getNote } from '../notes/notes.service.js';
import { CONTENT_MAX_BYTES } from '../notes/version-rules.js';
import { newId } from '../shared/ids.js';
import { hrefOf, lockPathOf, pathOfUrl, segmentsOf, type Segments } from './dav-path.js';
import * as repo from './dav.repository.js';
import { ALLOW_COLLECTION, copy, etagOf, mkcol, move, notesTooLarge, put, remove, type DavServices } from './dav.service.js';
import { parseIf, sameEtag, submittedTokens, type IfList } from './if-header.js';
import { activeLock, below, covering, parseTimeout, requireTokens, TOKEN_PREFIX, type LockRow } from './locks.js';
import { contentTypeOf, isLive, propfindResponses, type PropfindRequest } from './properties.js';
import { isCollection, listChildren, locate, folderIdOf, type Entry, type Located } from './tree.js';
import { child, DAV, elements, emptyElement, escapeXml, is, parseXml, serialize, XML_DECLARATION, type XmlElement } from './xml.js';

const DAV_METHODS = ['PROPFIND', 'PROPPATCH', 'MKCOL', 'COPY', 'MOVE', 'LOCK', 'UNLOCK'] as const;
const METHODS = ['OPTIONS', 'GET', 'HEAD', 'PUT', 'DELETE', ...DAV_METHODS];
const ALLOW = 'OPTIONS, GET, HEAD, PUT, DELETE, PROPFIND, PROPPATCH, MKCOL, COPY, MOVE, LOCK, UNLOCK';
/**
 * XML bodies (PROPFIND, PROPPATCH, LOCK) are small; dead properties are not a file store (litmus'
 * largest is under 1 KB). 256 KiB: saxes reads some shapes a character at a time (one CDATA
 * section of `]`, a processing instruction of `?`, CR LF text), and at 1 MiB those held the event
 * loop 130-530 ms (review of #37); at 256 KiB, a tenth of that.
 */
const XML_MAX_BYTES = 256 * 1024;
/** Each change is a row written in one transaction: bounded, so one request cannot hold the write lock for long. */
const MAX_PROPERTY_CHANGES = 200;
/** Each name is looked up for every resource of a Depth: 1 answer: bounded like the changes. */
const MAX_PROPERTY_NAMES = 200;

const notFound = () => new AppError(404, 'dav_not_found', 'Nothing is at this path');
const noParent = () => new AppError(409, 'dav_conflict', 'The folder this path is in does not exist');
const preconditionFailed = () => new AppError(412, 'precondition_failed', 'A precondition (If, If-Match, If-None-Match or Overwrite) does not hold');
const badRequest = (detail: string) => new AppError(400, 'invalid_dav_request', detail);
const forbidden = (detail: string) => new AppError(403, 'dav_forbidden', detail);

/** Reads a whole body up to `limit` bytes. */
async function readBody(body: unknown, limit: number, tooLarge: () => AppError): Promise<Buffer> {
  if (body === undefined || body === null) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as Readable) {
    size += (chunk as Buffer).length;
    if (size > limit) throw tooLarge();
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

async function* bodyStream(body: unknown): AsyncGenerator<Buffer> {
  if (body === undefined || body === null) return;
  for await (const chunk of body as Readable) yield chunk as Buffer;
}

async function readXml(request: FastifyRequest): Promise<XmlElement | undefined> {
  const bytes = await readBody(request.body, XML_MAX_BYTES, () => new AppError(413, 'body_too_large', 'Request body is too large'));
  if (bytes.length === 0) return undefined;
  return parseXml(bytes.toString('utf8'));
}

function multistatus(reply: FastifyReply, inner: string): FastifyReply {
  return reply.code(207).type('application/xml; charset=utf-8').send(`${XML_DECLARATION}<D:multistatus xmlns:D="DAV:">${inner}</D:multistatus>`);
}

/** A header that is not one of Node's known ones may come as an array: the first value counts. */
function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The request's If header, parsed (undefined when absent). */
function ifLists(request: FastifyRequest): IfList[] | undefined {
  const value = header(request, 'if');
  return value === undefined ? undefined : parseIf(value);
}

/**
 * WebDAV at /dav/ (README, "Use Vellum from other apps"): its own handlers over the notes, folders
 * and attachments services; bodies are left unparsed by Fastify and read here, each within its limit.
 */
export const davRoutes: FastifyPluginAsync<{ services: DavServices }> = async (app: FastifyInstance, { services }) => {
  const { db } = services;
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));

  /** Whether the If header holds: some list whose every condition does, against its resource. */
  async function ifHolds(lists: IfList[], ownerId: string, located: Located, locks: LockRow[]): Promise<boolean> {
    for (const list of lists) {
      let segments: Segments = located.segments;
      let entry = located.entry;
      if (list.resource !== undefined) {
        try {
          segments = segmentsOf(pathOfUrl(list.resource));
        } catch {
          continue;
        }
        if (lockPathOf(segments) !== lockPathOf(located.segments)) entry = (await locate(db, ownerId, segments)).entry;
      }
      const path = lockPathOf(segments);
      const etag = entry === undefined ? undefined : etagOf(entry);
      const holds = list.conditions.every((c) => {
        const match = c.token !== undefined
          ? covering(locks, path).some((lock) => lock.token === c.token)
          : etag !== undefined && sameEtag(c.etag!, etag);
        return c.not ? !match : match;
      });
      if (holds) return true;
    }
    return false;
  }

  /**
   * The checks every write makes: the If header (412 when it does not hold, RFC 4918 §10.4), then
   * the locks (423 unless the header names the tokens of the locks on each changed path, and below
   * it when `tree`).
   */
  async function checkWrite(
    request: FastifyRequest, ownerId: string, located: Located, changed: Array<{ segments: Segments; tree: boolean }>,
  ): Promise<LockRow[]> {
    const locks = await repo.liveLocks(db, ownerId, new Date().toISOString());
    const lists = ifLists(request);
    const submitted = lists === undefined ? new Set<string>() : submittedTokens(lists);
    if (lists !== undefined && !(await ifHolds(lists, ownerId, located, locks))) throw preconditionFailed();
    for (const { segments, tree } of changed) {
      const path = lockPathOf(segments);
      requireTokens([...covering(locks, path), ...(tree ? below(locks, path) : [])], submitted);
    }
    return locks;
  }

  /** If-Match and If-None-Match against the entry's ETag (RFC 9110 §13): made-up tags simply do not match. */
  function checkMatch(request: FastifyRequest, entry: Entry | undefined, read: boolean): 'not-modified' | undefined {
    const etag = entry === undefined ? undefined : etagOf(entry);
    const tags = (value: string) => value.split(',').map((t) => t.trim()).filter((t) => t !== '');
    const ifMatch = request.headers['if-match'];
    if (ifMatch !== undefined) {
      const list = tags(ifMatch);
      const holds = entry !== undefined && (list.includes('*') || (etag !== undefined && list.some((t) => !t.startsWith('W/') && t === etag)));
      if (!holds) throw preconditionFailed();
    }
    const ifNoneMatch = request.headers['if-none-match'];
    if (ifNoneMatch !== undefined && entry !== undefined) {
      const list = tags(ifNoneMatch);
      if (list.includes('*') || (etag !== undefined && list.some((t) => sameEtag(t, etag)))) {
        if (read) return 'not-modified';
        throw preconditionFailed();
      }
    }
    return undefined;
  }

  async function get(request: FastifyRequest, reply: FastifyReply, ownerId: string, located: Located) {
    const entry = located.entry;
    if (entry === undefined) throw notFound();
    if (ifLists(request) !== undefined) await checkWrite(request, ownerId, located, []);
    if (entry.kind !== 'note' && entry.kind !== 'file') {
      const children = await listChildren(db, ownerId, folderIdOf(entry));
      const items = children.map((c) => `<li><a href="${escapeXml(hrefOf([...located.segments, c.name], isCollection(c)))}">${escapeXml(c.name)}${isCollection(c) ? '/' : ''}</a></li>`);
      return reply.type('text/html; charset=utf-8').send(`<!doctype html><meta charset="utf-8"><title>${escapeXml(entry.name || 'Vellum')}</title><ul>${items.join('')}</ul>`);
    }
    reply.header('last-modified', new Date(entry.updated_at).toUTCString());
    if (checkMatch(request, entry, true) === 'not-modified') return reply.code(304).header('etag', etagOf(entry)).send();
    if (entry.kind === 'file') {
      const row = await attachments.find(services.attachments, ownerId, entry.attachment_id);
      return sendAttachment(services.attachments, request, reply, { ...row, size: Number(row.size) }, etagOf(entry));
    }
    const bytes = Buffer.from((await getNote(db, ownerId, entry.id)).content, 'utf8');
    return reply.header('etag', etagOf(entry)).header('accept-ranges', 'none').type(contentTypeOf(entry)!).header('content-length', String(bytes.length)).send(bytes);
  }

  async function putHandler(request: FastifyRequest, reply: FastifyReply, ownerId: string, located: Located) {
    const parent = located.parent;
    if (parent === undefined) throw located.segments.length === 0 ? forbidden('The top level is a collection') : noParent();
    checkMatch(request, located.entry, false);
    await checkWrite(request, ownerId, located, [{ segments: located.segments, tree: false }]);
    const expected = request.headers['if-match'] !== undefined && located.entry?.kind === 'note' ? located.entry.version : undefined;
    const outcome = await put(
      services, ownerId, parent, located.segments.at(-1)!, located.entry, bodyStream(request.body),
      () => readBody(request.body, CONTENT_MAX_BYTES, notesTooLarge), expected,
    );
    const now = (await locate(db, ownerId, located.segments)).entry;
    const etag = now === undefined ? undefined : etagOf(now);
    if (etag !== undefined) reply.header('etag', etag);
    return reply.code(outcome === 'created' ? 201 : 204).send();
  }

  async function deleteHandler(request: FastifyRequest, reply: FastifyReply, ownerId: string, located: Located) {
    const entry = located.entry;
    if (entry === undefined) throw notFound();
    checkMatch(request, entry, false);
    const locks = await checkWrite(request, ownerId, located, [{ segments: located.segments, tree: true }]);
    await remove(services, ownerId, entry);
    const path = lockPathOf(located.segments);
    await repo.deleteLocksAt(db, ownerId, [...covering(locks, path).filter((l) => l.path === path), ...below(locks, path)].map((l) => l.token));
    return reply.code(204).send();
  }

  async function mkcolHandler(request: FastifyRequest, reply: FastifyReply, ownerId: string, located: Located) {
    const body = await readBody(request.body, XML_MAX_BYTES, () => new AppError(415, 'unsupported_media_type', 'MKCOL takes no body'));
    if (body.length > 0) throw new AppError(415, 'unsupported_media_type', 'MKCOL takes no body');
    if (located.entry !== undefined) throw new AppError(405, 'method_not_allowed', 'Something already exists at this path', {}, { allow: ALLOW_COLLECTION });
    if (located.parent === undefined) throw noParent();
    await checkWrite(request, ownerId, located, [{ segments: located.segments, tree: false }]);
    await mkcol(services, ownerId, located.parent, located.segments.at(-1)!);
    return reply.code(201).send();
  }

  async function copyMove(request: FastifyRequest, reply: FastifyReply, ownerId: string, located: Located, moving: boolean) {
    const source = located.entry;
    if (source === undefined) throw notFound();
    const destination = header(request, 'destination');
    if (destination === undefined) throw badRequest('COPY and MOVE need a Destination header');
    const target = segmentsOf(pathOfUrl(destination));
    const from = lockPathOf(located.segments);
    const to = lockPathOf(target);
    if (target.join('/') === located.segments.join('/')) throw forbidden('The destination is the source');
    if (isCollection(source) && (from === '' || to.startsWith(`${from}/`))) throw forbidden('A folder cannot be copied or moved into itself');
    const depth = header(request, 'depth')?.trim().toLowerCase();
    if (isCollection(source) && depth !== undefined && depth !== 'infinity' && (moving || depth !== '0')) throw badRequest('Depth must be infinity (or 0 for COPY)');
    const dest = await locate(db, ownerId, target);
    if (dest.parent === undefined) throw noParent();
    const existing = dest.entry !== undefined && dest.entry.id !== source.id ? dest.entry : undefined;
    const overwrite = (header(request, 'overwrite') ?? 'T').trim().toUpperCase();
    if (overwrite !== 'T' && overwrite !== 'F') throw badRequest('Overwrite must be T or F');
    if (existing !== undefined && overwrite === 'F') throw preconditionFailed();
    checkMatch(request, source, false);
    const locks = await checkWrite(request, ownerId, located, [
      { segments: target, tree: true }, ...(moving ? [{ segments: located.segments, tree: true }] : []),
    ]);
    if (moving) {
      await move(services, ownerId, source, dest.parent, target.at(-1)!, dest.entry);
      await repo.deleteLocksAt(db, ownerId, [...covering(locks, from).filter((l) => l.path === from), ...below(locks, from)].map((l) => l.token));
    } else {
      await copy(services, ownerId, source, located.segments, dest.parent, target.at(-1)!, existing, depth !== '0');
    }
    return reply.code(existing === undefined ? 201 : 204).send();
  }

  async function propfind(request: FastifyRequest, reply: FastifyReply, ownerId: string, located: Located) {
    const entry = located.entry;
    if (entry === undefined) throw notFound();
    const depth = header(request, 'depth')?.trim().toLowerCase();
    if (depth !== '0' && depth !== '1') {
      throw new AppError(403, 'propfind_finite_depth', 'PROPFIND needs Depth: 0 or 1 (infinity is refused)');
    }
    const body = await readXml(request);
    let asked: PropfindRequest = { kind: 'allprop' };
    if (body !== undefined) {
      if (!is(body, DAV, 'propfind')) throw badRequest('The body must be a DAV:propfind element');
      const prop = child(body, DAV, 'prop');
      if (prop !== undefined) {
        const names = elements(prop);
        if (names.length > MAX_PROPERTY_NAMES) throw badRequest(`A PROPFIND may ask for at most ${MAX_PROPERTY_NAMES} properties`);
        asked = { kind: 'prop', names: names.map((p) => ({ ns: p.ns, name: p.name })) };
      }
      else if (child(body, DAV, 'propname') !== undefined) asked = { kind: 'propname' };
      else if (child(body, DAV, 'allprop') === undefined) throw badRequest('DAV:propfind must hold DAV:prop, DAV:propname or DAV:allprop');
    }
    const items = [{ entry, segments: located.segments }];
    if (depth === '1' && isCollection(entry)) {
      for (const c of await listChildren(db, ownerId, folderIdOf(entry))) items.push({ entry: c, segments: [...located.segments, c.name] });
    }
    const locks = await repo.liveLocks(db, ownerId, new Date().toISOString());
    return multistatus(reply, await propfindResponses(db, asked, items, locks));
  }

  async function proppatch(request: FastifyRequest, reply: FastifyReply, ownerId: string, located: Located) {
    const entry = located.entry;
    if (entry === undefined) throw notFound();
    await checkWrite(request, ownerId, located, [{ segments: located.segments, tree: false }]);
    const body = await readXml(request);
    if (body === undefined || !is(body, DAV, 'propertyupdate')) throw badRequest('The body must be a DAV:propertyupdate element');
    const changes: Array<{ set: boolean; prop: XmlElement }> = [];
    for (const op of elements(body)) {
      if (op.ns !== DAV || (op.name !== 'set' && op.name !== 'remove')) continue;
      for (const prop of elements(child(op, DAV, 'prop') ?? { ns: '', name: '', attributes: [], children: [] })) changes.push({ set: op.name === 'set', prop });
    }
    if (changes.length > MAX_PROPERTY_CHANGES) throw badRequest(`A PROPPATCH may change at most ${MAX_PROPERTY_CHANGES} properties`);
    const refused = changes.filter((c) => isLive(c.prop.ns, c.prop.name));
    const status = (c: { prop: XmlElement }) => (refused.length === 0 ? '200 OK' : isLive(c.prop.ns, c.prop.name) ? '403 Forbidden' : '424 Failed Dependency');
    if (refused.length === 0) {
      await db.transaction().execute(async (trx) => {
        for (const { set, prop } of changes) {
          if (set) await repo.setProperty(trx, { owner_id: ownerId, resource_id: entry.id, namespace: prop.ns, name: prop.name, value: serialize(prop) });
          else await repo.removeProperty(trx, entry.id, prop.ns, prop.name);
        }
      });
    }
    const byStatus = new Map<string, string[]>();
    for (const c of changes) byStatus.set(status(c), [...(byStatus.get(status(c)) ?? []), emptyElement(c.prop.ns, c.prop.name)]);
    const propstats = [...byStatus].map(([s, props]) => `<D:propstat><D:prop>${props.join('')}</D:prop><D:status>HTTP/1.1 ${s}</D:status></D:propstat>`).join('');
    return multistatus(reply, `<D:response><D:href>${escapeXml(hrefOf(located.segments, isCollection(entry)))}</D:href>${propstats}</D:response>`);
  }

  async function lock(request: FastifyRequest, reply: FastifyReply, ownerId: string, located: Located) {
    const body = await readXml(request);
    const now = new Date();
    const timeout = parseTimeout(header(request, 'timeout'));
    const expiresAt = new Date(now.getTime() + timeout * 1000).toISOString();
    const path = lockPathOf(located.segments);
    const locks = await repo.liveLocks(db, ownerId, now.toISOString());
    const lists = ifLists(request);
    if (body === undefined) {
      // A refresh: the If header names a lock that applies here.
      const tokens = lists === undefined ? new Set<string>() : submittedTokens(lists);
      const held = covering(locks, path).find((l) => tokens.has(l.token));
      if (held === undefined) throw preconditionFailed();
      await repo.refreshLock(db, ownerId, held.token, timeout, expiresAt);
      return reply.type('application/xml; charset=utf-8')
        .send(`${XML_DECLARATION}<D:prop xmlns:D="DAV:"><D:lockdiscovery>${activeLock({ ...held, timeout_seconds: timeout, expires_at: expiresAt }, now.getTime())}</D:lockdiscovery></D:prop>`);
    }
    if (!is(body, DAV, 'lockinfo')) throw badRequest('The body must be a DAV:lockinfo element');
    const scope = child(body, DAV, 'lockscope');
    const exclusive = scope !== undefined && child(scope, DAV, 'exclusive') !== undefined;
    if (!exclusive && (scope === undefined || child(scope, DAV, 'shared') === undefined)) throw badRequest('DAV:lockscope must be exclusive or shared');
    const type = child(body, DAV, 'locktype');
    if (type === undefined || child(type, DAV, 'write') === undefined) throw badRequest('Only write locks exist');
    const depth = header(request, 'depth')?.trim().toLowerCase() ?? 'infinity';
    if (depth !== '0' && depth !== 'infinity') throw badRequest('A lock\'s Depth is 0 or infinity');
    const infinite = depth === 'infinity' && located.entry !== undefined && isCollection(located.entry);
    const conflicting = [...covering(locks, path), ...(infinite ? below(locks, path) : [])];
    if (conflicting.some((l) => exclusive || l.exclusive)) throw new AppError(423, 'locked', 'The resource is already locked');
    if (lists !== undefined && !(await ifHolds(lists, ownerId, located, locks))) throw preconditionFailed();
    let created = false;
    if (located.entry === undefined) {
      // RFC 4918 §9.10.4: locking an unmapped URL creates an empty resource.
      if (located.parent === undefined) throw noParent();
      await put(services, ownerId, located.parent, located.segments.at(-1)!, undefined, bodyStream(undefined), async () => Buffer.alloc(0), undefined);
      created = true;
    }
    const owner = child(body, DAV, 'owner');
    const row: LockRow = {
      token: `${TOKEN_PREFIX}${newId()}`, path, depth_infinity: infinite, exclusive,
      lock_owner: owner === undefined ? '' : serialize(owner), timeout_seconds: timeout, expires_at: expiresAt,
    };
    await repo.insertLock(db, { ...row, owner_id: ownerId });
    return reply.code(created ? 201 : 200).header('lock-token', `<${row.token}>`).type('application/xml; charset=utf-8')
      .send(`${XML_DECLARATION}<D:prop xmlns:D="DAV:"><D:lockdiscovery>${activeLock(row, now.getTime())}</D:lockdiscovery></D:prop>`);
  }

  async function unlock(request: FastifyRequest, reply: FastifyReply, ownerId: string, located: Located) {
    const token = /^\s*<([^>]+)>\s*$/.exec(header(request, 'lock-token') ?? '')?.[1];
    if (token === undefined) throw badRequest('UNLOCK needs a Lock-Token header: <token>');
    const locks = await repo.liveLocks(db, ownerId, new Date().toISOString());
    const held = covering(locks, lockPathOf(located.segments)).find((l) => l.token === token);
    if (held === undefined) throw new AppError(409, 'lock_token_mismatch', 'No lock with this token applies to this path');
    await repo.deleteLock(db, ownerId, token);
    return reply.code(204).send();
  }

  async function handler(request: FastifyRequest, reply: FastifyReply) {
    reply.header('dav', '1, 2');
    if (request.method === 'OPTIONS') {
      return reply.header('allow', ALLOW).header('ms-author-via', 'DAV').header('accept-ranges', 'bytes').code(200).send();
    }
    const ownerId = requireUserId(request.claims!);
    // A fragment never belongs in a request (litmus's delete_fragment): refused, not cut off.
    if (request.url.includes('#')) throw badRequest('The request path must not hold a fragment (#)');
    const located = await locate(db, ownerId, segmentsOf(pathOfUrl(request.url)));
    switch (request.method) {
      case 'GET': case 'HEAD': return get(request, reply, ownerId, located);
      case 'PUT': return putHandler(request, reply, ownerId, located);
      case 'DELETE': return deleteHandler(request, reply, ownerId, located);
      case 'MKCOL': return mkcolHandler(request, reply, ownerId, located);
      case 'COPY': return copyMove(request, reply, ownerId, located, false);
      case 'MOVE': return copyMove(request, reply, ownerId, located, true);
      case 'PROPFIND': return propfind(request, reply, ownerId, located);
      case 'PROPPATCH': return proppatch(request, reply, ownerId, located);
      case 'LOCK': return lock(request, reply, ownerId, located);
      default: return unlock(request, reply, ownerId, located);
    }
  }

  for (const url of ['/dav', '/dav/*']) {
    app.route({
      method: METHODS as HTTPMethods[], url, handler,
      // Whole files go through here; each kind of body has its own limit below.
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
