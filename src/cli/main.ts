import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { Argument, Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { StartupError, isSystemError } from '../lifecycle/startupFailure.ts';
import { SingleBar, Presets } from 'cli-progress';
import { ConfigError, loadConfig } from '../config.ts';
import { createServices, eventLogFile, type Services } from '../services.ts';
import { openEventLogToRead } from './eventLogToRead.ts';
import type { EventStore } from '../ports/eventStore.ts';
import { actingAs } from '../commands/context.ts';
import {
  TenancyError,
  addUser,
  checkApiKeyInput,
  checkTeamInput,
  checkUserInput,
  changeSiteSettings,
  switchSiteWebhooks,
  createApiKey,
  createSite,
  createTeam,
  revokeApiKey,
  setTeamBillingStatus,
} from '../commands/tenancy.ts';
import { BILLING_STATUSES, ROLES } from '../domain/team.ts';
import { PLANS, type SiteSettings } from '../domain/site.ts';
import { SCOPES, isScope, type Scope } from '../domain/scopes.ts';
import { eventLine, parseBool, choiceOption, parseDomain, parseNonNegativeInt, print } from './output.ts';
import { registerWebhookCommands } from './webhooks.ts';
import { registerTeamUserCommands } from './teamUsers.ts';
import { registerSendingDomainCommands } from './sendingDomain.ts';
import { registerOutboxCommands } from './outbox.ts';
import { registerAgentWorkerCommand } from './worker.ts';
import { registerProspectCommands } from './prospects.ts';
import { registerAgentsCommands } from './agents.ts';
import { EVENT_TYPES, eventDataSchema, eventFieldsMarkdown } from './eventSchemas.ts';
import { ServiceError } from '../domain/errors.ts';
import { configureAgent } from '../commands/agents.ts';
import { suppressContact } from '../commands/suppression.ts';
import { listSitesOfTeam } from '../readModels/sites.ts';
import { AGENT_KEYS, type AgentSettings, REPLY_TONES, SIGNATURE_MAX_LENGTH } from '../domain/agents.ts';
import { SUPPRESSION_REASONS, SUPPRESSION_SOURCES } from '../domain/suppression.ts';
import { CLEAN_TEXT_MESSAGE, DISPLAY_NAME_MESSAGE, isCleanText, isDisplayName } from '../domain/text.ts';
import { passwordFrom } from './passwordFromEnv.ts';
import { normaliseEmail } from '../domain/email.ts';

/** A free-text setting: trimmed, empty clears it, too long is refused. */
function textSetting(flag: string, value: string, max: number, lines: 'display name' | 'lines'): string | null {
  const v = value.trim();
  if (v.length > max) throw new TenancyError(`${flag} is longer than ${max} characters`);
  if (lines === 'display name' ? !isDisplayName(v) : !isCleanText(v)) throw new TenancyError(`${flag} ${lines === 'display name' ? DISPLAY_NAME_MESSAGE : CLEAN_TEXT_MESSAGE}`);
  return v === '' ? null : v;
}

// A reader that stops early (`outreach events tail | head`) closes the pipe: end quietly, as other command-line tools do.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

const program = new Command('outreach')
  .description('Admin CLI of the Outreach Integration Service. Uses the same configuration (environment) as the server.')
  .option('--json', 'print one JSON object per command')
  .showHelpAfterError()
  // Each command's --help lists --json too.
  .configureHelp({ showGlobalOptions: true })
  // Argument errors reach the handler at the end, so that with --json they too print one JSON object.
  .exitOverride();

const json = () => Boolean(program.opts().json);
/** Opens the stores for one command and closes them after it; what the command records names the operator (`operator`/`cli`) as its actor. */
async function withServices<T>(fn: (services: Services) => Promise<T>): Promise<T> {
  return withServicesForRole((services) => fn(actingAs(services, { kind: 'operator', id: 'cli' })));
}

/** The same for a background role run as its own process: what it records is the service's own work (no actor). */
async function withServicesForRole<T>(fn: (services: Services) => Promise<T>): Promise<T> {
  const config = loadConfig();
  // Run from another directory (DATA_DIR defaults to ./data) or with a mistyped path, a command would
  // write to a store of its own that no server reads: said on stderr, so --json output stays one object.
  const log = eventLogFile(config);
  const fresh = !config.EVENTSTORE_URL && !existsSync(log);
  const services = await createServices(config);
  // Said once the stores are open: a start that fails (a secret.key that does not open) created nothing.
  if (fresh && existsSync(log)) {
    process.stderr.write(`note: ${resolve(log)} did not exist: a new, empty event log was created there (DATA_DIR=${config.DATA_DIR}); a server using another DATA_DIR does not see what this command records\n`);
  }
  try {
    return await fn(services);
  } finally {
    await services.close();
  }
}

const team = program.command('team').description('teams and their users');
team
  .command('create')
  .description('create a team and its owner')
  .requiredOption('--name <name>', 'team name')
  .requiredOption('--owner-email <email>', "owner's email address")
  .option('--owner-password <password>', "owner's dashboard password (or set OUTREACH_OWNER_PASSWORD)")
  .action(async (opts) => {
    const input = { name: opts.name, ownerEmail: opts.ownerEmail, ownerPassword: passwordFrom(opts.ownerPassword, 'OUTREACH_OWNER_PASSWORD') };
    checkTeamInput(input);
    await withServices(async (s) => {
      const r = await createTeam(s, input);
      print(json(), { teamId: r.teamId, ownerUserId: r.ownerUserId }, `team ${r.teamId} created, owner user ${r.ownerUserId}`);
    });
  });
team
  .command('set')
  .description("change a team's subscription status")
  .requiredOption('--team <teamId>', 'the team')
  .addOption(choiceOption('--billing <status>', BILLING_STATUSES, (list) => `team subscription status: ${list}`))
  .action(async (opts) => {
    if (!opts.billing) throw new TenancyError('nothing to change: give --billing');
    await withServices(async (s) => {
      await setTeamBillingStatus(s, { teamId: opts.team, billingStatus: opts.billing });
      print(json(), { teamId: opts.team, billing: opts.billing }, `team ${opts.team} updated`);
    });
  });
team
  .command('add-user')
  .description('add a person to a team (their address is claimed at once; without a password they cannot sign in to the dashboard)')
  .requiredOption('--team <teamId>', 'the team')
  .requiredOption('--email <email>', "the person's email address")
  .addOption(choiceOption('--role <role>', ROLES).default('member'))
  .option('--password <password>', "the user's dashboard password (or set OUTREACH_USER_PASSWORD: kept out of shell history and ps)")
  .action(async (opts) => {
    const password = passwordFrom(opts.password, 'OUTREACH_USER_PASSWORD');
    checkUserInput(normaliseEmail(opts.email), password);
    await withServices(async (s) => {
      const r = await addUser(s, { teamId: opts.team, email: opts.email, role: opts.role, password });
      if (!password) process.stderr.write('no password given: the user has no dashboard sign-in until `outreach team set-password`\n');
      print(json(), { userId: r.userId }, `user ${r.userId} added`);
    });
  });
registerTeamUserCommands(team, json, withServices);

const site = program.command('site').description('sites');
site
  .command('create')
  .description("create a team's site for a domain (its forwarding address is printed)")
  .requiredOption('--team <teamId>', 'the team')
  .addOption(new Option('--domain <domain>', "the site's domain").makeOptionMandatory().argParser(parseDomain('--domain')))
  .addOption(choiceOption('--plan <plan>', PLANS).default('starter'))
  .action(async (opts) =>
    withServices(async (s) => {
      const r = await createSite(s, { teamId: opts.team, domain: opts.domain, plan: opts.plan }, s.config.MAIL_DOMAIN);
      print(json(), { siteId: r.siteId, forwardingAddress: r.forwardingAddress }, `site ${r.siteId} created, forwarding address ${r.forwardingAddress}`);
    }),
  );
site
  .command('set')
  .description("change a site's plan, licence, sending domain status, credits or daily caps")
  .requiredOption('--site <siteId>', 'the site')
  .addOption(choiceOption('--plan <plan>', PLANS))
  .addOption(new Option('--licensed <bool>', 'true or false').argParser(parseBool('--licensed')))
  .addOption(new Option('--sending-domain-verified <bool>', 'true or false').argParser(parseBool('--sending-domain-verified')))
  .addOption(new Option('--ai-credits <n>', 'a whole number').argParser(parseNonNegativeInt('--ai-credits')))
  .addOption(new Option('--daily-ingestion-cap <n>', 'ingestions per UTC day').argParser(parseNonNegativeInt('--daily-ingestion-cap')))
  .addOption(new Option('--daily-extraction-cap <n>', 'AI extractions per UTC day').argParser(parseNonNegativeInt('--daily-extraction-cap')))
  .action(async (opts) => {
    const changes: Partial<SiteSettings> = {
      plan: opts.plan,
      licensed: opts.licensed,
      sendingDomainVerified: opts.sendingDomainVerified,
      aiCredits: opts.aiCredits,
      dailyIngestionCap: opts.dailyIngestionCap,
      dailyExtractionCap: opts.dailyExtractionCap,
    };
    for (const key of Object.keys(changes) as (keyof SiteSettings)[]) if (changes[key] === undefined) delete changes[key];
    if (Object.keys(changes).length === 0) {
      throw new TenancyError('nothing to change: give --plan, --licensed, --sending-domain-verified, --ai-credits, --daily-ingestion-cap or --daily-extraction-cap');
    }
    await withServices(async (s) => {
      await changeSiteSettings(s, { siteId: opts.site, changes });
      print(json(), { siteId: opts.site, ...changes }, `site ${opts.site} updated`);
    });
  });

site
  .command('webhooks')
  .description("turn the site's outbound webhooks on or off (events that happen while off are never delivered)")
  .addArgument(new Argument('<onOrOff>', 'on or off').choices(['on', 'off']))
  .requiredOption('--site <siteId>', 'the site')
  .action(async (onOrOff: 'on' | 'off', opts) => {
    await withServices(async (s) => {
      await switchSiteWebhooks(s, { siteId: opts.site, enabled: onOrOff === 'on' });
      print(json(), { siteId: opts.site, webhooksEnabled: onOrOff === 'on' }, `outbound webhooks of site ${opts.site}: ${onOrOff}`);
    });
  });

const apikey = program.command('apikey').description('API keys');
apikey
  .command('create')
  .description('create an API key (shown once)')
  .requiredOption('--team <teamId>', 'the team')
  .requiredOption('--scopes <scopes>', `comma-separated, from: ${SCOPES.join(', ')}`, (v: string) => {
    const scopes = v.split(',').map((x) => x.trim()).filter(Boolean);
    const bad = scopes.filter((x) => !isScope(x));
    if (bad.length || scopes.length === 0) throw new InvalidArgumentError(`unknown scope(s): ${bad.join(', ') || '(none given)'}`);
    return scopes as Scope[];
  })
  .option('--site <siteId>', 'restrict the key to one site')
  .option('--name <name>', 'a name to recognise the key by', 'API key')
  .action(async (opts) => {
    checkApiKeyInput({ name: opts.name, scopes: opts.scopes });
    await withServices(async (s) => {
      const r = await createApiKey(s, { teamId: opts.team, name: opts.name, scopes: opts.scopes, siteId: opts.site ?? null });
      print(json(), { id: r.id, key: r.key }, `API key ${r.id} created. It is shown only once:\n${r.key}`);
    });
  });
apikey
  .command('revoke')
  .description('revoke an API key (refused at its next request)')
  .requiredOption('--id <apiKeyId>', "the key's id (not the key)")
  .action(async (opts) =>
    withServices(async (s) => {
      await revokeApiKey(s, { apiKeyId: opts.id });
      print(json(), { id: opts.id, revoked: true }, `API key ${opts.id} revoked`);
    }),
  );

/**
 * The event log alone, for the auditor's commands: a missing one is an error (a mistyped DATA_DIR
 * created an empty log, read models and a new key, and printed nothing), and no other store is
 * opened. A DATA_DIR this user may not write to is read without writing (openEventLogToRead).
 */
async function withEventLog<T>(fn: (events: EventStore, snapshot: boolean) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const file = eventLogFile(config);
  if (!config.EVENTSTORE_URL && !existsSync(file)) {
    throw new TenancyError(`no event log at ${resolve(file)} (DATA_DIR=${config.DATA_DIR}): nothing to read, and none was created`);
  }
  const log = await openEventLogToRead(config);
  try {
    return await fn(log.events, log.snapshot);
  } finally {
    await log.close();
  }
}

const events = program.command('events').description('the event history, for auditors (JSON lines)');
events
  .command('read <stream>')
  .description('print every event of one stream')
  .action(async (stream: string) =>
    withEventLog(async (log) => {
      const recorded = await log.readStream(stream);
      // A stream exists once something is recorded in it: a mistyped name would read as an empty stream.
      if (recorded.length === 0) throw new TenancyError(`no stream ${JSON.stringify(stream)}: nothing is recorded under that name (names look like team-<teamId>, site-<siteId>; see events tail)`);
      for (const e of recorded) process.stdout.write(eventLine(e) + '\n');
    }),
  );
events
  .command('tail')
  .description('print the global log, then follow it until interrupted')
  .option('--from <position>', 'start after this global position', (v: string) => {
    // A position is a signed 64-bit integer in every store.
    if (!/^(-1|0|[1-9][0-9]*)$/.test(v) || BigInt(v) > 2n ** 63n - 1n) throw new InvalidArgumentError('--from must be a global position (a whole number up to 9223372036854775807, or -1 for the start)');
    return v;
  }, '-1')
  .option('--no-follow', 'stop at the end of the log')
  .action(async (opts) =>
    withEventLog(async (log, snapshot) => {
      let after = BigInt(opts.from);
      if (opts.follow && snapshot) {
        process.stderr.write('events tail: the log is read from a copy (DATA_DIR is read-only and no process has the log open), which later appends do not reach: it stops at the end, as with --no-follow\n');
      }
      if (!opts.follow || snapshot) {
        for (;;) {
          const page = await log.readAll({ after, limit: 1000 });
          for (const e of page) process.stdout.write(eventLine(e) + '\n');
          if (page.length < 1000) return;
          after = page[page.length - 1]!.position;
        }
      }
      // Ctrl-C while following ends the loop and the log is closed; with --no-follow it ends the process, as in any command.
      const controller = new AbortController();
      const stop = () => controller.abort();
      process.once('SIGINT', stop);
      try {
        for await (const e of log.subscribeToAll({ after, signal: controller.signal })) process.stdout.write(eventLine(e) + '\n');
      } finally {
        process.off('SIGINT', stop);
      }
    }),
  );

events
  .command('schema [type]')
  .description("the JSON Schema of each event type's data (JSON lines), of one type, or the field table of docs/eventFields.md")
  .option('--markdown', 'print the field table of every type (docs/eventFields.md)')
  .action((type: string | undefined, opts: { markdown?: boolean }) => {
    if (opts.markdown && type !== undefined) throw new TenancyError('--markdown prints every type: give no type with it');
    if (opts.markdown) return void process.stdout.write(eventFieldsMarkdown());
    if (type !== undefined && eventDataSchema(type) === null) {
      throw new TenancyError(`no event type ${JSON.stringify(type.slice(0, 100))}: the types are listed in docs/events.md (or run events schema without one)`);
    }
    for (const t of type === undefined ? EVENT_TYPES : [type]) process.stdout.write(JSON.stringify({ type: t, data: eventDataSchema(t) }) + '\n');
  });

const agent = program.command('agent').description("a site's agents (the agents API builds on the same events)");
agent
  .command('set')
  .description("turn a site's agent on or off, or change the Outreach Agent's reply settings")
  .requiredOption('--site <siteId>', 'the site')
  .addOption(choiceOption('--key <agentKey>', AGENT_KEYS).makeOptionMandatory())
  .addOption(new Option('--active <bool>', 'turn the agent on or off').argParser(parseBool('--active')))
  .addOption(new Option('--auto-reply <bool>', 'let the agent send replies on its own').argParser(parseBool('--auto-reply')))
  .option('--sender-name <name>', 'outreach: the name replies are sent from (empty: the site domain)')
  .option('--signature <text>', 'outreach: closing signature of replies (empty: none)')
  .addOption(choiceOption('--tone <tone>', REPLY_TONES, (list) => `outreach: wording of replies: ${list}`))
  .addOption(new Option('--decline-replies <bool>', 'outreach: answer declined pitches with a polite no').argParser(parseBool('--decline-replies')))
  .action(async (opts) => {
    const changes: Partial<AgentSettings> = {};
    if (opts.active !== undefined) changes.active = opts.active;
    if (opts.autoReply !== undefined) changes.autoReply = opts.autoReply;
    if (opts.senderName !== undefined) changes.senderName = textSetting('--sender-name', opts.senderName, 120, 'display name');
    if (opts.signature !== undefined) changes.signature = textSetting('--signature', opts.signature, SIGNATURE_MAX_LENGTH, 'lines');
    if (opts.tone !== undefined) changes.tone = opts.tone;
    if (opts.declineReplies !== undefined) changes.declineReplies = opts.declineReplies;
    if (Object.keys(changes).length === 0) throw new TenancyError('nothing to change: give --active, --auto-reply, --sender-name, --signature, --tone or --decline-replies');
    await withServices(async (s) => {
      await configureAgent(s, { siteId: opts.site, agentKey: opts.key, changes });
      print(json(), { siteId: opts.site, agentKey: opts.key, ...changes }, `agent ${opts.key} of site ${opts.site} updated`);
    });
  });

const contact = program.command('contact').description("contacts and the team's suppression list");
contact
  .command('suppress')
  .description("add an address to the team's suppression list (the agent never mails the addresses on it)")
  .requiredOption('--team <teamId>', 'the team')
  .requiredOption('--email <email>', 'the address')
  .option('--site <siteId>', 'the site the suppression is reported on (default: every site of the team)')
  .addOption(choiceOption('--reason <reason>', SUPPRESSION_REASONS, (list) => `why (${list}); an entry only moves to a stronger reason`).default('manual'))
  .addOption(choiceOption('--source <source>', SUPPRESSION_SOURCES, (list) => `how it was learnt: ${list}`).default('manual'))
  .action(async (opts) =>
    withServices(async (s) => {
      // The read models as the log stands (no server may be running to keep them current).
      await s.projections.catchUp();
      const teamSiteIds = (await listSitesOfTeam(s.readModels, opts.team, { sortBy: 'id' })).map((site) => site.id);
      const r = await suppressContact(s, { teamId: opts.team, teamSiteIds, email: opts.email, reason: opts.reason, source: opts.source, siteId: opts.site });
      print(json(), { teamId: opts.team, email: r.email, siteIds: r.siteIds, changed: r.suppressed }, r.suppressed ? `${r.email} suppressed for team ${opts.team}` : `${r.email} was already suppressed for that reason`);
    }),
  );

const projections = program.command('projections').description('read models');
projections
  .command('rebuild [name]')
  .description('rebuild one projection (or all) from the full history, in bulk; readers see the old documents until the switch')
  .action(async (name: string | undefined) =>
    withServices(async (s) => {
      const chosen = s.projections.projections.filter((p) => !name || p.name === name);
      if (chosen.length === 0) throw new TenancyError(`unknown projection ${name}; known: ${s.projections.projections.map((p) => p.name).join(', ')}`);
      const head = await s.events.headPosition();
      const total = Number(head + 1n);
      const bar = json() ? null : new SingleBar({ format: 'rebuilding [{bar}] {percentage}% | {value}/{total} positions | {eta}s left' }, Presets.shades_classic);
      bar?.start(Math.max(total, 1), 0);
      const started = Date.now();
      const report = await s.projections.rebuild(
        chosen.map((p) => p.name),
        (position) => bar?.update(Number(position + 1n)),
      );
      bar?.update(Math.max(total, 1));
      bar?.stop();
      print(
        json(),
        { rebuilt: report.projections, position: report.position.toString(), events: report.events, documents: report.documents, ms: Date.now() - started },
        `rebuilt ${report.projections.join(', ')} up to position ${report.position} (${report.events} events, ${report.documents} documents)`,
      );
    }),
  );

registerWebhookCommands(program, json, withServicesForRole);
registerSendingDomainCommands(program, json, withServices);
registerOutboxCommands(program, json);
registerAgentWorkerCommand(program, json, withServicesForRole);
registerProspectCommands(program, json, withServices);
registerAgentsCommands(program, json, withServices);

program.parseAsync(process.argv).catch((error) => {
  if (error instanceof CommanderError) {
    // commander has already written its message (and the help) to stderr.
    const message = error.code === 'commander.help' ? 'no command given (see outreach --help)' : error.message.replace(/^error: /, '');
    if (error.exitCode !== 0 && json()) process.stdout.write(JSON.stringify({ error: message }) + '\n');
    process.exit(error.exitCode);
  }
  // A cause the operator fixes (configuration, a data directory or key file, a wrong secret key): one line, no stack.
  if (error instanceof ConfigError || error instanceof TenancyError || error instanceof ServiceError || error instanceof StartupError || isSystemError(error)) {
    if (json()) process.stdout.write(JSON.stringify({ error: error.message }) + '\n');
    else process.stderr.write(`error: ${error.message}\n`);
    process.exit(1);
  }
  process.stderr.write(`error: ${(error as Error).stack ?? error}\n`);
  if (json()) process.stdout.write(JSON.stringify({ error: error instanceof Error ? error.message : String(error) }) + '\n');
  process.exit(1);
});
