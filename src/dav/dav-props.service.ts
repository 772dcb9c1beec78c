import { Errors } from '../errors.js';
import { hrefOf, type Segments } from './dav-path.js';
import { checkWrite } from './dav-conditions.js';
import type { DavBody, DavHeaders } from './dav-request.js';
import * as repo from './dav.repository.js';
import type { DavServices } from './dav.service.js';
import { isLive } from './properties.js';
import { isCollection, locate } from './tree.js';
import { child, DAV, elements, emptyElement, escapeXml, is, serialize, type XmlElement } from './xml.js';

/** Each change is a row written in one transaction: bounded, so one request cannot hold the write lock for long. */
const MAX_PROPERTY_CHANGES = 200;

/**
 * PROPPATCH: dead properties set and removed all together, or (when one is live) none of them;
 * the inside of the multistatus.
 */
export async function davProppatch(
  s: DavServices,
  ownerId: string,
  segments: Segments,
  headers: DavHeaders,
  body: DavBody,
): Promise<string> {
  const located = await locate(s.db, ownerId, segments);
  const entry = located.entry;
  if (entry === undefined) throw Errors.davNotFound();
  await checkWrite(s.db, headers, ownerId, located, [{ segments, tree: false }]);
  const xml = await body.xml();
  if (xml === undefined || !is(xml, DAV, 'propertyupdate'))
    throw Errors.invalidDavRequest('The body must be a DAV:propertyupdate element');
  const changes: Array<{ set: boolean; prop: XmlElement }> = [];
  for (const op of elements(xml)) {
    if (op.ns !== DAV || (op.name !== 'set' && op.name !== 'remove')) continue;
    for (const prop of elements(child(op, DAV, 'prop') ?? { ns: '', name: '', attributes: [], children: [] }))
      changes.push({ set: op.name === 'set', prop });
  }
  if (changes.length > MAX_PROPERTY_CHANGES)
    throw Errors.invalidDavRequest(`A PROPPATCH may change at most ${MAX_PROPERTY_CHANGES} properties`);
  const refused = changes.filter((c) => isLive(c.prop.ns, c.prop.name));
  const status = (c: { prop: XmlElement }) =>
    refused.length === 0 ? '200 OK' : isLive(c.prop.ns, c.prop.name) ? '403 Forbidden' : '424 Failed Dependency';
  if (refused.length === 0) {
    await s.db.transaction().execute(async (trx) => {
      for (const { set, prop } of changes) {
        if (set)
          await repo.setProperty(trx, {
            owner_id: ownerId,
            resource_id: entry.id,
            namespace: prop.ns,
            name: prop.name,
            value: serialize(prop),
          });
        else await repo.removeProperty(trx, entry.id, prop.ns, prop.name);
      }
    });
  }
  const byStatus = new Map<string, string[]>();
  for (const c of changes)
    byStatus.set(status(c), [...(byStatus.get(status(c)) ?? []), emptyElement(c.prop.ns, c.prop.name)]);
  const propstats = [...byStatus]
    .map(
      ([st, props]) => `<D:propstat><D:prop>${props.join('')}</D:prop><D:status>HTTP/1.1 ${st}</D:status></D:propstat>`,
    )
    .join('');
  return `<D:response><D:href>${escapeXml(hrefOf(segments, isCollection(entry)))}</D:href>${propstats}</D:response>`;
}
