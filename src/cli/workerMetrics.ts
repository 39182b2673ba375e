import { type Command, InvalidArgumentError } from 'commander';
import { type WorkerMetricsServer, serveWorkerMetrics } from '../http/workerMetricsServer.ts';
import type { Services } from '../services.ts';
import { decimal } from './output.ts';

export interface WorkerMetricsOptions {
  metricsPort?: number;
  metricsHost: string;
}

const port = (value: string): number => {
  const n = decimal(value);
  if (!Number.isInteger(n) || n < 0 || n > 65_535) throw new InvalidArgumentError('a port number from 0 to 65535');
  return n;
};

/** `--metrics-port` / `--metrics-host` on each `outreach worker …` command. */
export function metricsOptions(command: Command): Command {
  return command
    .option('--metrics-port <port>', 'serve GET /metrics (Prometheus text) on this port (0: any free port); off when omitted', port)
    .option('--metrics-host <host>', 'address the metrics listener binds', '127.0.0.1');
}

/** Starts the worker's metrics listener when `--metrics-port` was given, and says where it listens on stderr. */
export async function startWorkerMetrics(services: Services, options: WorkerMetricsOptions): Promise<WorkerMetricsServer | null> {
  if (options.metricsPort === undefined) return null;
  const server = await serveWorkerMetrics(services, options.metricsPort, options.metricsHost);
  process.stderr.write(`metrics at ${server.url}/metrics\n`);
  return server;
}
