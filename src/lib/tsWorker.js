// @ts-check
/**
 * Entry of a worker thread whose code is TypeScript: registers the tsx loader in this thread (a
 * process started by `npm start` has it, one started by the CLI registers it in its main thread
 * only), then imports `workerData.entry`. Plain JavaScript so that it loads without the loader.
 */
import { register } from 'tsx/esm/api';
import { workerData } from 'node:worker_threads';

register();
await import(workerData.entry);
