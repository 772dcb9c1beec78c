import { pino, type Logger } from 'pino';
import { loggerOptions } from '../../src/logger.js';

export interface CapturedLogs {
  /** The app's logger: the production options (redaction included), writing to memory. */
  logger: Logger;
  /** Every line written so far, as written. */
  lines: string[];
}

export function captureLogs(level = 'trace'): CapturedLogs {
  const lines: string[] = [];
  const logger = pino(loggerOptions({ logLevel: level }), { write: (line: string) => void lines.push(line) });
  return { logger, lines };
}
