// A stand-in for the breached-password range API (Have I Been Pwned's k-anonymity API) for the
// browser tests: GET /range/<5 hex> answers SUFFIX:COUNT lines, listing the SHA-1 of each password
// in BREACHED_PASSWORDS (newline-separated) among a few padding lines. No network leaves the machine.
import { createHash } from 'node:crypto';
import http from 'node:http';

const breached = (process.env.BREACHED_PASSWORDS ?? '')
  .split('\n')
  .filter(Boolean)
  .map((p) => createHash('sha1').update(p, 'utf8').digest('hex').toUpperCase());

http
  .createServer((request, response) => {
    const match = /^\/range\/([0-9A-F]{5})$/i.exec(request.url ?? '');
    if (request.url === '/healthz') return response.end('ok');
    if (!match) {
      response.statusCode = 404;
      return response.end();
    }
    const prefix = match[1].toUpperCase();
    const lines = breached.filter((h) => h.startsWith(prefix)).map((h) => `${h.slice(5)}:42`);
    lines.push('0000000000000000000000000000000000A:0', 'FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF:0');
    response.setHeader('content-type', 'text/plain');
    response.end(lines.join('\r\n'));
  })
  .listen(Number(process.env.PORT), '127.0.0.1');
