import { pino, type LoggerOptions } from 'pino';
import type { Config } from './config.js';

/** Secrets never reach a log line: headers that carry them and body fields that hold them are cut. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-csrf-token"]',
  'res.headers["set-cookie"]',
  // Headers logged under other names: @fastify/multipart logs its busboy options, headers and all,
  // at trace level (issue #43: `Authorization: Bearer <access token>` in the log).
  '*.headers.authorization',
  '*.headers.cookie',
  '*.headers["x-csrf-token"]',
  '*.headers["set-cookie"]',
  'headers.authorization',
  'headers.cookie',
  '*.password',
  '*.old_password',
  '*.new_password',
  '*.access_token',
  '*.refresh_token',
  '*.token',
];

export function loggerOptions(config: Pick<Config, 'logLevel'>): LoggerOptions {
  return {
    level: config.logLevel,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
  };
}

/**
 * Where the server writes its lines: standard output, buffered. A synchronous write(2) per request
 * line cost about a sixth of a note read's CPU (BENCHMARKS.md); lines are gathered up to 4 KiB and
 * written at the latest every 100 ms, and pino flushes what is left when the process exits (also
 * on a crash). A SIGKILL can lose the last 100 ms of lines.
 */
export function serverLogDestination(): pino.DestinationStream {
  return pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: 100 });
}
