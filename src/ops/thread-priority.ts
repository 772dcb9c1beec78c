import fs from 'node:fs';
import os from 'node:os';

/** Nice value for every thread but the event loop's (0 = normal, 19 = lowest). */
const BACKGROUND_NICE = 10;

/**
 * Lowers the CPU priority of every thread of this process except the event loop's main thread:
 * libuv's thread pool, where Argon2 runs, and V8's helper threads. On a machine with few cores a
 * login storm keeps a hash running on a core without pause, and the event loop then had to share
 * what was left with everything else: reads waited 10x their usual time (BENCHMARKS.md). With the
 * hashes at a lower priority the kernel runs request handling first and hashing in the time left.
 *
 * Linux only (its nice value is per thread; /proc/self/task lists them); elsewhere it does nothing.
 * Call it once at start-up, after the thread pool exists (`startThreadPool`). Returns how many
 * threads it lowered.
 */
export function lowerBackgroundThreadPriority(): number {
  let tasks: string[];
  try {
    tasks = fs.readdirSync('/proc/self/task');
  } catch {
    return 0;
  }
  let lowered = 0;
  for (const task of tasks) {
    const tid = Number(task);
    if (tid === process.pid) continue;
    try {
      if (os.getPriority(tid) < BACKGROUND_NICE) os.setPriority(tid, BACKGROUND_NICE);
      lowered++;
    } catch {
      // the thread ended, or the system refused: priorities are an optimisation
    }
  }
  return lowered;
}

/** libuv starts all of its pool's threads on the first job given to it; this is such a job. */
export async function startThreadPool(): Promise<void> {
  await fs.promises.access(os.tmpdir()).catch(() => {});
}

/**
 * For a thread started after start-up (the diff, search and import workers), called on that thread: the same lower
 * priority, so that a diff of two large versions takes the CPU the event loop leaves over.
 */
export function lowerOwnThreadPriority(): void {
  try {
    if (os.getPriority() < BACKGROUND_NICE) os.setPriority(BACKGROUND_NICE);
  } catch {
    // refused by the system: priorities are an optimisation
  }
}
