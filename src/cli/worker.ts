import type { Command } from 'commander';
import { loadConfig } from '../config.ts';
import { startAgentWorker } from '../processors/agent/startAgentWorker.ts';
import { createServices } from '../services.ts';

const ROLES = ['agent', 'projections'] as const;
type Role = (typeof ROLES)[number];

const log = {
  error: (obj: unknown, msg?: string) => console.error(JSON.stringify({ level: 'error', msg, err: String((obj as { err?: unknown })?.err ?? obj) })),
  warn: (obj: unknown, msg?: string) => console.error(JSON.stringify({ level: 'warn', msg, err: String((obj as { err?: unknown })?.err ?? obj) })),
};

/**
 * `outreach worker <role...>`: background roles as their own process, for scale-out (the API nodes
 * then run with RUN_AGENT=false, RUN_PROJECTIONS=false). Runs until SIGTERM or SIGINT.
 */
export function registerWorkerCommands(program: Command): void {
  program
    .command('worker')
    .description('run background roles without the HTTP API: agent (the Outreach Agent), projections')
    .argument('<roles...>', `one or more of: ${ROLES.join(', ')}`)
    .action(async (roles: string[]) => {
      const unknown = roles.filter((r) => !(ROLES as readonly string[]).includes(r));
      if (unknown.length > 0) program.error(`unknown role: ${unknown.join(', ')} (one of: ${ROLES.join(', ')})`);
      const chosen = new Set(roles as Role[]);
      const services = await createServices(loadConfig(), { onProjectionError: (err) => log.error({ err }, 'projection failed') });
      if (chosen.has('projections')) services.projections.start();
      const agent = chosen.has('agent') ? await startAgentWorker(services, log) : null;
      console.error(JSON.stringify({ level: 'info', msg: 'worker started', roles: [...chosen] }));
      await new Promise<void>((resolve) => {
        process.once('SIGTERM', resolve);
        process.once('SIGINT', resolve);
      });
      await agent?.stop();
      await services.close();
    });
}
