import type { LoggerOptions } from 'pino';
import type { Config } from './config.js';

/** Secrets never reach a log line: headers that carry them and body fields that hold them are cut. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-csrf-token"]',
  'res.headers["set-cookie"]',
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
