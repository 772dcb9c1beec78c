/** The methods WebDAV answers at /dav/, for the router and for Allow headers (also in errors.ts). */
export const DAV_METHODS = ['PROPFIND', 'PROPPATCH', 'MKCOL', 'COPY', 'MOVE', 'LOCK', 'UNLOCK'] as const;
export const METHODS = ['OPTIONS', 'GET', 'HEAD', 'PUT', 'DELETE', ...DAV_METHODS];
export const ALLOW = 'OPTIONS, GET, HEAD, PUT, DELETE, PROPFIND, PROPPATCH, MKCOL, COPY, MOVE, LOCK, UNLOCK';
/** What a collection allows: everything but PUT and MKCOL. */
export const ALLOW_COLLECTION = 'OPTIONS, GET, HEAD, DELETE, PROPFIND, PROPPATCH, COPY, MOVE, LOCK, UNLOCK';
