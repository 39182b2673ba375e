import { createServer } from 'node:net';

/** A reason the service cannot start that the operator can fix: reported as one line, without a stack. */
export class StartupError extends Error {
  override readonly name = 'StartupError';
}

/**
 * What an operator reads when the service cannot start: one line for a known cause (configuration,
 * a file, the port), the stack only for anything else (a bug to report).
 */
export function startupFailure(error: unknown): string {
  if (error instanceof StartupError) return `cannot start: ${error.message}`;
  if (isSystemError(error)) {
    const e = error as NodeJS.ErrnoException & { address?: string; port?: number };
    if (e.code === 'EADDRINUSE') return `cannot start: ${e.address ?? ''}:${e.port ?? ''} is already in use (another instance running?)`;
    return `cannot start: ${e.message}`;
  }
  return `cannot start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`;
}

/** An error from the operating system (a file, a directory, a port): its message names the cause. */
export function isSystemError(error: unknown): boolean {
  const e = error as Partial<NodeJS.ErrnoException> | null;
  return typeof e?.code === 'string' && typeof e.syscall === 'string';
}

/**
 * Fails before anything starts when the port is taken (a second `npm start`), instead of after the
 * background roles are up. Another process may still take it before the real listen, which then fails the same way.
 */
export async function assertPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return;
  await new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}
