import type { FastifyRequest } from 'fastify';
import { Errors } from '../errors.js';

/**
 * Production's HTTPS requirement of the CSRF protection: a refresh must come from this host over
 * HTTPS or from a configured trusted origin. Browsers always send Origin on a cross-site POST; when
 * it is absent we fall back to Referer, and refuse a request that carries neither.
 */
export function assertTrustedOrigin(request: FastifyRequest, trustedOrigins: readonly string[]): void {
  const claimed = request.headers.origin ?? originOf(request.headers.referer);
  const own = `https://${request.host}`;
  if (claimed === undefined || (claimed !== own && !trustedOrigins.includes(claimed))) {
    throw Errors.originNotAllowed();
  }
}

function originOf(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}
