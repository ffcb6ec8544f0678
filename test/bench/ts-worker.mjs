/**
 * Entry of the bench's TypeScript worker threads. On Node 20 the hooks that
 * `--import tsx` installs do not apply to a worker's own entry file (it
 * fails with "Unknown file extension .ts"), so this plain module registers
 * tsx in the worker and then imports the module named by `workerData.entry`.
 * The worker keeps the parent's execArgv, so `node --cpu-prof` also profiles it.
 */
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.entry);
