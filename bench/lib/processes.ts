// Child processes of the benchmark: started bounded in time (coreutils `timeout` wraps each, so
// even a runner killed with SIGKILL leaves nothing behind for long), stopped by the runner, and
// sampled for memory through /proc.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface Child {
  readonly name: string;
  readonly proc: ChildProcess;
  readonly logFile: string;
  /** Peak memory seen so far, in bytes. */
  readonly memory: MemorySampler;
  exited: boolean;
}

const running = new Set<Child>();

/** A port the kernel says is free right now on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export function startChild(
  name: string,
  command: string[],
  options: { env: NodeJS.ProcessEnv; logFile: string; maxSeconds: number; cwd?: string },
): Child {
  const log = fs.openSync(options.logFile, 'a');
  // `timeout` sends SIGTERM at the limit and SIGKILL 10 s later; it forwards our SIGTERM too.
  const proc = spawn('timeout', ['-k', '10', String(options.maxSeconds), ...command], {
    env: options.env,
    cwd: options.cwd,
    stdio: ['ignore', log, log],
  });
  fs.closeSync(log);
  const child: Child = { name, proc, logFile: options.logFile, memory: new MemorySampler(proc.pid!), exited: false };
  running.add(child);
  proc.once('exit', () => {
    child.exited = true;
    child.memory.stop();
    running.delete(child);
  });
  return child;
}

/** SIGTERM, then SIGKILL to the whole tree after `graceMs`. Resolves once the wrapper has exited. */
export async function stopChild(child: Child, graceMs = 12_000): Promise<void> {
  if (child.exited) return;
  const exited = new Promise<void>((resolve) => child.proc.once('exit', () => resolve()));
  child.memory.sample();
  child.memory.readHighWaterMarks();
  child.proc.kill('SIGTERM');
  const timer = setTimeout(() => {
    process.stderr.write(`[bench] ${child.name} did not stop within ${graceMs} ms of SIGTERM; killing it\n`);
    for (const pid of [...descendants(child.proc.pid!), child.proc.pid!]) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }, graceMs);
  await exited;
  clearTimeout(timer);
}

/** Last resort on the way out (runner error, signal): every child still running gets SIGTERM. */
export async function stopAll(): Promise<void> {
  await Promise.all([...running].map((child) => stopChild(child, 5_000)));
}

export async function waitForHttp(url: string, child: Child, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exited)
      throw new Error(`${child.name} exited during start-up; see ${child.logFile}:\n${tail(child.logFile)}`);
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(1_000) });
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(
    `${child.name} did not answer ${url} within ${timeoutMs} ms; see ${child.logFile}:\n${tail(child.logFile)}`,
  );
}

export function tail(file: string, lines = 20): string {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/** CPU time (user + system, seconds) used so far by the node processes of a child. */
export function cpuSeconds(child: Child): number {
  let ticks = 0;
  for (const pid of nodePids(child.proc.pid!)) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // Fields 14 and 15 of /proc/<pid>/stat (utime, stime) are at 11 and 12 after "state".
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // gone
    }
  }
  return ticks / CLOCK_TICKS;
}

/** Busy CPU seconds of the whole machine so far (all cores), from /proc/stat. */
export function machineBusySeconds(): number {
  const cpu = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal ...: busy is everything but idle and iowait.
  const busy = cpu.reduce((a, b) => a + b, 0) - (cpu[3] ?? 0) - (cpu[4] ?? 0);
  return busy / CLOCK_TICKS;
}

/** USER_HZ; 100 on every Linux build that matters here. */
const CLOCK_TICKS = 100;

function nodePids(root: number): number[] {
  return descendants(root).filter((pid) => {
    try {
      return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'node';
    } catch {
      return false;
    }
  });
}

/** Every process below `root` (its children, theirs, ...), read from /proc. */
export function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so cut at the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(entry));
      children.set(ppid, list);
    } catch {
      // the process ended while we looked
    }
  }
  const out: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    for (const pid of children.get(queue.shift()!) ?? []) {
      out.push(pid);
      queue.push(pid);
    }
  }
  return out;
}

function statusField(pid: number, field: 'VmRSS' | 'VmHWM'): number | undefined {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match === null ? undefined : Number(match[1]) * 1024;
  } catch {
    return undefined;
  }
}

/**
 * Polls VmRSS of every node process under the wrapper and keeps, per process, the larger of the
 * polled peak and the kernel's own high-water mark (VmHWM, read just before the process is stopped).
 */
export class MemorySampler {
  /** pid -> peak bytes */
  readonly peaks = new Map<number, number>();
  /** Largest sum over all processes seen in one poll. */
  peakTotal = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly root: number) {
    this.timer = setInterval(() => this.sample(), 250);
    this.timer.unref();
  }

  private pids(): number[] {
    return nodePids(this.root);
  }

  sample(): void {
    let total = 0;
    for (const pid of this.pids()) {
      const rss = statusField(pid, 'VmRSS');
      if (rss === undefined) continue;
      total += rss;
      this.peaks.set(pid, Math.max(this.peaks.get(pid) ?? 0, rss));
    }
    this.peakTotal = Math.max(this.peakTotal, total);
  }

  readHighWaterMarks(): void {
    for (const pid of this.pids()) {
      const hwm = statusField(pid, 'VmHWM');
      if (hwm !== undefined) this.peaks.set(pid, Math.max(this.peaks.get(pid) ?? 0, hwm));
    }
  }

  /** The largest single process's peak. */
  get peakProcess(): number {
    return Math.max(0, ...this.peaks.values());
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

/** The resident set of a process, in MiB (/proc/<pid>/status). */
export const rssMiB = (pid: number): number =>
  Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

/** CPU time (user + system) a process has used, in ms (/proc/<pid>/stat, USER_HZ 100). */
export function cpuMs(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}
