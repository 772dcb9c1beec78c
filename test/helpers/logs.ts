import { pino, type Logger } from 'pino';
import { loggerOptions } from '../../src/logger.js';

export interface CapturedLogs {
  /** The app's logger: the production options (redaction included), writing to memory. */
  logger: Logger;
  /** Every line written so far, as written. */
  lines: string[];
  /** Resolves with the first line (already written or still to come) whose text matches. */
  line(pattern: RegExp): Promise<string>;
}

export function captureLogs(level = 'trace'): CapturedLogs {
  const lines: string[] = [];
  const waiters: Array<{ pattern: RegExp; resolve: (line: string) => void }> = [];
  const logger = pino(loggerOptions({ logLevel: level }), {
    write: (line: string) => {
      lines.push(line);
      for (const waiter of waiters.filter((w) => w.pattern.test(line))) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    },
  });
  const line = (pattern: RegExp) => {
    const found = lines.find((l) => pattern.test(l));
    return found !== undefined
      ? Promise.resolve(found)
      : new Promise<string>((resolve) => waiters.push({ pattern, resolve }));
  };
  return { logger, lines, line };
}
