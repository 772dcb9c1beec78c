import { parentPort } from 'node:worker_threads';
import { lowerOwnThreadPriority } from '../ops/thread-priority.js';
import { diffJson } from './diff.js';

lowerOwnThreadPriority();

/**
 * Diffs large versions off the event loop; answers with the diff's JSON already encoded as UTF-8,
 * its memory handed over rather than copied: the JSON of two unrelated 1 MiB versions is ~11 MB,
 * and copying it as a string and then encoding it on the event loop held up other requests.
 */
parentPort!.on('message', (job: { id: number; from: string; to: string; context: number; header: string }) => {
  try {
    const bytes = new TextEncoder().encode(diffJson(job.from, job.to, job.context, job.header));
    parentPort!.postMessage({ id: job.id, bytes }, [bytes.buffer]);
  } catch (error) {
    parentPort!.postMessage({ id: job.id, error: String(error) });
  }
});
