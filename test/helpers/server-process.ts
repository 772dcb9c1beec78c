import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

/** A server (or CLI) started as its own process, with its output kept line by line. */
export interface ServerProcess {
  readonly child: ChildProcessWithoutNullStreams;
  /** Every line written to stdout or stderr so far. */
  readonly lines: string[];
  /** Resolves with the first value `check` returns for a line (written or still to come); rejects after `ms`. */
  waitFor<T>(check: (line: string) => T | undefined, ms: number, what: string): Promise<T>;
  /** Resolves on exit once the output has been read to the end. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The port from Fastify's "Server listening at" line (or the primary's "all workers listening"). */
  port(ms?: number): Promise<number>;
  /** SIGKILL if still running; for after() hooks. */
  kill(): Promise<void>;
  output(): string;
}

export function startProcess(
  command: string,
  args: string[],
  options: { cwd: string; env: Record<string, string> },
): ServerProcess {
  const child = spawn(command, args, { cwd: options.cwd, env: { PATH: process.env.PATH ?? '', ...options.env } });
  const lines: string[] = [];
  const listeners = new Set<() => void>();
  let partial = '';
  const onOutput = (chunk: Buffer) => {
    partial += String(chunk);
    const complete = partial.split('\n');
    partial = complete.pop()!;
    lines.push(...complete);
    for (const fn of [...listeners]) fn();
  };
  child.stdout.on('data', onOutput);
  child.stderr.on('data', onOutput);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => {
      if (partial !== '') lines.push(partial);
      for (const fn of [...listeners]) fn();
      resolve({ code, signal });
    }),
  );
  const output = () => lines.join('\n');

  const waitFor = <T>(check: (line: string) => T | undefined, ms: number, what: string): Promise<T> =>
    new Promise((resolve, reject) => {
      let seen = 0;
      const scan = () => {
        for (; seen < lines.length; seen++) {
          const found = check(lines[seen]!);
          if (found !== undefined) {
            finish();
            resolve(found);
            return;
          }
        }
        if (child.exitCode !== null || child.signalCode !== null) {
          finish();
          reject(new Error(`process exited while waiting for ${what}; output:\n${output()}`));
        }
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`timed out waiting for ${what}; output:\n${output()}`));
      }, ms);
      const finish = () => {
        clearTimeout(timer);
        listeners.delete(scan);
      };
      listeners.add(scan);
      scan();
    });

  return {
    child,
    lines,
    exited,
    waitFor,
    output,
    port: (ms = 60_000) =>
      waitFor(
        (line) => {
          const m = /Server listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(logEntry(line)?.msg ?? '');
          return m === null ? undefined : Number(m[1]);
        },
        ms,
        'the listening line',
      ),
    async kill() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}

/** A pino JSON line, or undefined for anything else. */
export function logEntry(line: string): { msg?: string; [key: string]: unknown } | undefined {
  try {
    const value = JSON.parse(line) as unknown;
    return typeof value === 'object' && value !== null ? (value as { msg?: string }) : undefined;
  } catch {
    return undefined;
  }
}

/** Waits for `exited` at most `ms`, failing with the output. */
export async function exitWithin(
  proc: ServerProcess,
  ms: number,
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    proc.exited,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no exit within ${ms} ms:\n${proc.output()}`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
