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

/**
 * Opens a store the configuration names by URL (`EVENTSTORE_URL`, `MONGODB_URL`): an unreachable
 * server or a URL its client refuses becomes one line naming the variable, not the client's stack.
 * The URL itself is not repeated (it may hold a password), and its password is cut from the client's
 * message should it appear there.
 */
export async function openingStore<T>(variable: string, url: string, open: () => Promise<T>): Promise<T> {
  try {
    return await open();
  } catch (error) {
    if (error instanceof StartupError) throw error;
    let message = error instanceof Error ? error.message : String(error);
    for (const password of passwordsOf(url)) message = message.replaceAll(password, '***');
    throw new StartupError(`${variable}: cannot open the store it names: ${message.split('\n')[0]!.trim()}`, { cause: error });
  }
}

/** The URL's password as written, decoded and encoded again (a fragment too short to be one is left alone). */
const passwordsOf = (url: string): string[] => {
  const written = /^[a-z+]+:\/\/[^:/@]*:(.*)@[^@]*$/i.exec(url)?.[1];
  if (!written) return [];
  let decoded = written;
  try {
    decoded = decodeURIComponent(written);
  } catch {
    // kept as written
  }
  return [...new Set([written, decoded, encodeURIComponent(decoded)])].filter((p) => p.length >= 4).sort((a, b) => b.length - a.length);
};

/** An error from the operating system (a file, a directory, a port): its message names the cause. */
export function isSystemError(error: unknown): boolean {
  const e = error as Partial<NodeJS.ErrnoException> | null;
  return typeof e?.code === 'string' && typeof e.syscall === 'string';
}

/**
 * Fails before anything starts when the port is taken (a second `npm start`), instead of after the
 * background roles are up. Another process may still take it before the real listen, which then fails the same way.
 * A host that does not resolve or is not this machine's, or a port this process may not open, is
 * named by its variable (`HOST`, `SMTP_HOST`; `PORT`, `SMTP_PORT`).
 */
/** A port another process holds, named by its variable (PORT, SMTP_PORT). */
export const portInUse = (variable: string, host: string, port: number, cause: unknown) =>
  new StartupError(`${variable}: ${host}:${port} is already in use (another instance running?)`, { cause });

export async function assertPortFree(host: string, port: number, variables = { host: 'HOST', port: 'PORT' }): Promise<void> {
  try {
    await new Promise<void>((resolve, reject) => {
      const probe = createServer();
      probe.once('error', reject);
      probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (!isSystemError(error)) throw error;
    if (code === 'EADDRINUSE') throw portInUse(variables.port, host, port, error);
    if (code === 'EACCES') throw new StartupError(`${variables.port}: this process may not listen on port ${port} (below 1024 needs privileges)`, { cause: error });
    const why = code === 'ENOTFOUND' || code === 'EAI_AGAIN' ? 'the name does not resolve' : code === 'EADDRNOTAVAIL' ? 'not an address of this machine' : (error as Error).message;
    throw new StartupError(`${variables.host}: cannot listen on ${host}: ${why}`, { cause: error });
  }
}
