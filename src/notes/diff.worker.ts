import { parentPort } from 'node:worker_threads';
import { diffJson } from './diff.js';

/** Diffs large versions off the event loop; answers with the diff's JSON pieces already serialised. */
parentPort!.on('message', (job: { id: number; from: string; to: string; context: number; header: string }) => {
  try {
    parentPort!.postMessage({ id: job.id, json: diffJson(job.from, job.to, job.context, job.header) });
  } catch (error) {
    parentPort!.postMessage({ id: job.id, error: String(error) });
  }
});
