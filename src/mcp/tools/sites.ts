import { mayReach } from '../../http/authenticate.ts';
import { type SiteDoc, getSite, listSitesOfTeam } from '../../readModels/sites.ts';
import { type GrantTool, defineGrantTool } from './tool.ts';

/** The sites the grant covers: every other tool takes one of their ids, which a person rarely knows by heart. */
export const grantTools: GrantTool[] = [
  defineGrantTool({
    name: 'list_sites',
    title: 'List the sites you may act on',
    description:
      "Lists the sites this connection was granted (id, domain, plan, licensed, sendingDomainVerified, createdAt), oldest first. Every other tool takes one of these ids as siteId; an unlicensed site's tools answer SITE_NOT_LICENSED.",
    run: async ({ app, credential }) => {
      // No site list: every site of the team (the rule every tool's site check follows).
      const found = credential.siteIds === null ? await listSitesOfTeam(app.readModels, credential.teamId) : await Promise.all(credential.siteIds.map((id) => getSite(app.readModels, id)));
      const sites = found.filter((site): site is SiteDoc => site !== null && mayReach(credential, site));
      sites.sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1));
      return {
        sites: sites.map((site) => ({
          id: site.id,
          domain: site.domain,
          plan: site.plan,
          licensed: site.licensed,
          sendingDomainVerified: site.sendingDomainVerified,
          createdAt: site.createdAt,
        })),
      };
    },
  }),
];
