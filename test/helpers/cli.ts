import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { entryArgs } from './entry.js';
import { TEST_ENV } from './harness.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `vellum ARGS` (src/cli.ts) as its own process, as an operator would, and collects what it
 * printed. Its environment is only what a test sets over a quiet base (the test-only Argon2 cost,
 * no logs, a HOME of its own), never the test runner's: a variable set where the tests run must not
 * change what the CLI does. `input` is its standard input (closed at once otherwise, so a prompt
 * reads an end of file rather than waiting); a run longer than `timeoutMs` is killed and fails.
 */
export function runCli(
  args: readonly string[],
  env: Record<string, string> = {},
  { input = '', timeoutMs = 60_000 }: { input?: string; timeoutMs?: number } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...entryArgs('cli'), ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', ...TEST_ENV, HOME: os.tmpdir(), LOG_LEVEL: 'silent', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += String(chunk);
    });
    child.stderr.on('data', (chunk) => {
      stderr += String(chunk);
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`vellum ${args.join(' ')} did not finish in ${timeoutMs / 1000} s; stderr: ${stderr}`));
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.on('error', () => {}); // the CLI may exit without reading its input
    child.stdin.end(input);
  });
}
