import { type Command, InvalidArgumentError, Option } from 'commander';
import { requestAgentRun } from '../commands/agentRuns.ts';
import { updateAgent } from '../commands/agents.ts';
import { creditsOf, grantCredits } from '../commands/credits.ts';
import { TenancyError, requireTeam } from '../commands/tenancy.ts';
import { AGENT_KEYS, CADENCE_HOURS_MAX } from '../domain/agents.ts';
import { RUN_STATUSES } from '../domain/agentRun.ts';
import { CATCH_UP_PAGE } from '../projections/projectionRunner.ts';
import { listAgentRuns } from '../readModels/agentRuns.ts';
import { listAgents } from '../readModels/agentViews.ts';
import { getSite } from '../readModels/sites.ts';
import type { Services } from '../services.ts';
import { decimal, parseBool, parseWholeNumber, choiceOption, print } from './output.ts';

type WithServices = <T>(fn: (services: Services) => Promise<T>) => Promise<T>;

/** The read models up to the log's head: a CLI process does not run the projections in the background. */
async function caughtUp(s: Services): Promise<void> {
  const head = await s.events.headPosition();
  while (s.projections.position < head) await s.projections.step(CATCH_UP_PAGE);
}

async function siteOf(s: Services, siteId: string) {
  await caughtUp(s);
  const site = await getSite(s.readModels, siteId);
  if (!site) throw new TenancyError(`site ${siteId} not found`);
  return site;
}

/** `--cadence-hours`: whole hours within the agents API's range, or `none` (kept as the word: commander turns a parsed null into ''). */
function cadenceHoursArg(value: string): number | 'none' {
  if (value === 'none') return value;
  const n = decimal(value);
  if (!Number.isInteger(n) || n < 1 || n > CADENCE_HOURS_MAX) throw new InvalidArgumentError(`--cadence-hours must be a whole number from 1 to ${CADENCE_HOURS_MAX}, or "none"`);
  return n;
}

/** `--setting key=value`: the value is JSON when it parses as JSON, else the text itself. */
function collectSetting(value: string, previous: Record<string, unknown> = {}): Record<string, unknown> {
  const eq = value.indexOf('=');
  if (eq <= 0) throw new InvalidArgumentError('--setting must be key=value');
  const raw = value.slice(eq + 1);
  let parsed: unknown = raw;
  try {
    parsed = JSON.parse(raw);
  } catch {
    // plain text
  }
  return { ...previous, [value.slice(0, eq)]: parsed };
}

/** `outreach agents list|set|run|runs` and `outreach credits grant|show`: the agents API's operations for operators. */
export function registerAgentsCommands(program: Command, json: () => boolean, withServices: WithServices): void {
  const agents = program.command('agents').description("a site's six agents, their runs (the same commands as the agents API)");
  agents
    .command('list')
    .description("a site's agents: active or not, cadence, last run, settings")
    .requiredOption('--site <siteId>', 'the site')
    .action(async (opts) =>
      withServices(async (s) => {
        const site = await siteOf(s, opts.site);
        const views = await listAgents(s.readModels, site, s.agentWork.workSettingsSchemas);
        const lines = views.map(
          (v) =>
            `${v.agentKey.padEnd(17)} ${(v.isActive ? 'active' : 'inactive').padEnd(9)} ${v.planAllows ? '' : '(plan does not allow) '}cadence ${v.cadenceHours ?? '-'}h  last run ${v.lastRun ? `${v.lastRun.status} ${v.lastRun.queuedAt}` : '-'}  ${JSON.stringify(v.settings)}`,
        );
        print(json(), { siteId: site.id, plan: site.plan, agents: views }, lines.join('\n'));
      }),
    );
  agents
    .command('set')
    .description('toggle or tune one agent, as PUT .../agents/{agentKey}')
    .requiredOption('--site <siteId>', 'the site')
    .addOption(choiceOption('--key <agentKey>', AGENT_KEYS).makeOptionMandatory())
    .addOption(new Option('--active <bool>', 'turn the agent on or off').argParser(parseBool('--active')))
    .option('--cadence-hours <n>', `scheduled runs every n hours (1..${CADENCE_HOURS_MAX}), or "none"`, cadenceHoursArg)
    .option('--setting <key=value>', 'one setting (repeatable); the value is JSON or text', collectSetting)
    .action(async (opts) =>
      withServices(async (s) => {
        const site = await siteOf(s, opts.site);
        const body: Record<string, unknown> = {};
        if (opts.active !== undefined) body.isActive = opts.active;
        if (opts.cadenceHours !== undefined) body.cadenceHours = opts.cadenceHours === 'none' ? null : opts.cadenceHours;
        if (opts.setting !== undefined) body.settings = opts.setting;
        await updateAgent(s, { siteId: site.id, plan: site.plan, agentKey: opts.key, body, workSettingsSchemas: s.agentWork.workSettingsSchemas });
        print(json(), { siteId: site.id, agentKey: opts.key, ...body }, `agent ${opts.key} of site ${site.id} updated`);
      }),
    );
  agents
    .command('run')
    .description('queue an on-demand run (counts toward the 5 per hour per site); the runner executes it')
    .requiredOption('--site <siteId>', 'the site')
    .addOption(choiceOption('--key <agentKey>', AGENT_KEYS).makeOptionMandatory())
    .action(async (opts) =>
      withServices(async (s) => {
        const site = await siteOf(s, opts.site);
        const { run } = await requestAgentRun(s, { teamId: site.teamId, siteId: site.id, agentKey: opts.key, trigger: 'on_demand', requestedBy: 'cli' });
        print(json(), { run }, `run ${run.id} of ${opts.key} queued`);
      }),
    );
  agents
    .command('runs')
    .description("a site's runs, newest first")
    .requiredOption('--site <siteId>', 'the site')
    .addOption(choiceOption('--key <agentKey>', AGENT_KEYS))
    .addOption(choiceOption('--status <status>', RUN_STATUSES))
    .option('--limit <n>', '1 to 100', parseWholeNumber('--limit', 1, 100), 25)
    .action(async (opts) =>
      withServices(async (s) => {
        const site = await siteOf(s, opts.site);
        const page = await listAgentRuns(s.readModels, site.id, { agentKey: opts.key, status: opts.status }, undefined, opts.limit);
        const lines = page.runs.map((r) => `${r.id}  ${r.agentKey.padEnd(17)} ${r.status.padEnd(9)} ${r.queuedAt}  ${r.failureReason ?? JSON.stringify(r.counts)}`);
        print(json(), { runs: page.runs }, lines.join('\n') || 'no runs');
      }),
    );

  const credits = program.command('credits').description("a team's AI credit ledger");
  credits
    .command('grant')
    .description('grant a team AI credits')
    .requiredOption('--team <teamId>', 'the team')
    .requiredOption('--amount <n>', 'a positive whole number of credits', parseWholeNumber('--amount', 1))
    .option('--note <text>', 'why (kept on the ledger)')
    .action(async (opts) =>
      withServices(async (s) => {
        const r = await grantCredits(s, { teamId: opts.team, amount: opts.amount, note: opts.note ?? null });
        print(json(), { teamId: r.teamId, granted: r.granted, debited: r.debited, balance: r.balance }, `granted ${opts.amount} credits to team ${r.teamId}; balance ${r.balance}`);
      }),
    );
  credits
    .command('show')
    .description("a team's credits: granted, used, balance")
    .requiredOption('--team <teamId>', 'the team')
    .action(async (opts) =>
      withServices(async (s) => {
        await requireTeam(s, opts.team);
        const r = await creditsOf(s, opts.team);
        print(json(), { ...r, enforced: s.config.AI_CREDITS_ENFORCED }, `team ${r.teamId}: granted ${r.granted}, used ${r.debited}, balance ${r.balance}${s.config.AI_CREDITS_ENFORCED ? '' : ' (not enforced)'}`);
      }),
    );
}
