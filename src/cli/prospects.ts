import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { importProspects } from '../commands/prospects.ts';
import { TenancyError } from '../commands/tenancy.ts';
import { OUTREACH_AGENT_PLANS } from '../domain/agents.ts';
import { prospectsFromCsv } from '../domain/prospectList.ts';
import { getSite } from '../readModels/sites.ts';
import type { Services } from '../services.ts';
import { print } from './output.ts';

type WithServices = <T>(fn: (services: Services) => Promise<T>) => Promise<T>;

/** `outreach prospects import --site <id> --file list.csv`: the Outreach Agent's prospect list, as the REST endpoint takes it. */
export function registerProspectCommands(program: Command, json: () => boolean, withServices: WithServices): void {
  const prospects = program.command('prospects').description("the Outreach Agent's prospects (sites to pitch)");
  prospects
    .command('import')
    .description('import a CSV prospect list (columns url,name,notes with a header row, or one https URL per line)')
    .requiredOption('--site <siteId>', 'the site whose Outreach Agent pitches them')
    .requiredOption('--file <path>', 'the CSV file')
    .action(async (options: { site: string; file: string }) => {
      let text: string;
      try {
        text = readFileSync(options.file, 'utf8');
      } catch (error) {
        throw new TenancyError(`cannot read ${options.file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
      }
      const list = prospectsFromCsv(text);
      if (!list.ok) throw new TenancyError(`invalid prospect list: ${list.errors.join('; ')}`);
      await withServices(async (s) => {
        await s.projections.catchUp();
        const site = await getSite(s.readModels, options.site);
        if (!site) throw new TenancyError(`site ${options.site} not found`);
        // As the REST endpoint: a site whose plan has no Outreach Agent would never pitch them.
        if (!OUTREACH_AGENT_PLANS.includes(site.plan)) {
          throw new TenancyError(`site ${site.id} is on the ${site.plan} plan; the Outreach Agent needs the Advanced plan (outreach site set --site ${site.id} --plan advanced)`);
        }
        const result = await importProspects(s, { siteId: site.id, teamId: site.teamId, prospects: list.prospects });
        print(
          json(),
          { siteId: site.id, importId: result.importId, imported: result.imported, unchanged: result.unchanged },
          `${result.imported} prospects imported for ${site.domain}${result.unchanged ? `, ${result.unchanged} already known unchanged` : ''}`,
        );
      });
    });
}
