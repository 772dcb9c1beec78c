import type { AddressInfo } from 'node:net';
import type { Config } from '../config.js';

/**
 * The one line a person starting the service reads (on stderr, beside the JSON logs on stdout):
 * where to open it. PUBLIC_URL when set; else the address listened on, with a wildcard or
 * loopback host shown as localhost.
 */
export function readyLine(config: Config, address: AddressInfo | Pick<AddressInfo, 'port'> | string | null): string {
  const port = typeof address === 'object' && address !== null ? address.port : config.port;
  const local = ['0.0.0.0', '::', '127.0.0.1', '::1', 'localhost'].includes(config.host);
  // config.ts makes PUBLIC_URL's default from PORT: that default is not an address to open when PORT=0.
  const publicUrlSet = config.publicUrl !== `http://localhost:${config.port}`;
  const url = publicUrlSet ? config.publicUrl : `http://${local ? 'localhost' : hostForUrl(config.host)}:${port}`;
  return `Vellum is ready: open ${url}/ in a browser\n`;
}

function hostForUrl(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}
