import { parentPort } from 'node:worker_threads';
import { lowerOwnThreadPriority } from '../ops/thread-priority.js';
import { diffJson } from './diff.js';

lowerOwnThreadPriority();

/**
 * Diffs every pair of versions but trivial ones off the event loop (see diff-runner); answers
 * with the diff's JSON already encoded as UTF-8, its memory handed over rather than copied, so
 * that neither the diff nor its encoding holds up the requests the event loop is serving.
 */
parentPort!.on('message', (job: { id: number; from: string; to: string; context: number; header: string }) => {
  try {
    const bytes = new TextEncoder().encode(diffJson(job.from, job.to, job.context, job.header));
    parentPort!.postMessage({ id: job.id, bytes }, [bytes.buffer]);
  } catch (error) {
    parentPort!.postMessage({ id: job.id, error: String(error) });
  }
});
