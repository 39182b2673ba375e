import type { Command } from 'commander';
import { createNodeDnsResolver } from '../adapters/dns/nodeDnsResolver.ts';
import { issueSendingDomainToken, verifySendingDomain } from '../commands/sendingDomain.ts';
import type { Services } from '../services.ts';
import { print } from './output.ts';

type WithServices = <T>(fn: (services: Services) => Promise<T>) => Promise<T>;

const WHY_NOT = {
  no_token_issued: 'no verification token was issued yet: run without --check first',
  record_missing: 'the TXT record was not found',
  record_mismatch: 'a TXT record was found but it holds another token',
  dns_error: 'the DNS lookup failed',
} as const;

/** `outreach site verify-domain <siteId> [--check] [--new-token]`. */
export function registerSendingDomainCommands(program: Command, json: () => boolean, withServices: WithServices): void {
  const site = program.commands.find((c) => c.name() === 'site') ?? program.command('site').description('sites');
  site
    .command('verify-domain <siteId>')
    .description("prove the site's sending domain: prints the DNS TXT record to publish; --check looks it up")
    .option('--check', 'look the TXT record up and record the outcome (success sets sendingDomainVerified)')
    .option('--new-token', 'replace the outstanding token with a fresh one')
    .action(async (siteId: string, opts: { check?: boolean; newToken?: boolean }) =>
      withServices(async (s) => {
        if (!opts.check) {
          const r = await issueSendingDomainToken(s, { siteId, renew: Boolean(opts.newToken) });
          print(
            json(),
            { ...r },
            `Publish this DNS TXT record for ${r.domain}, then run: outreach site verify-domain ${siteId} --check\n` +
              `  name:  ${r.recordName}\n  type:  TXT\n  value: ${r.recordValue}`,
          );
          return;
        }
        const resolver = createNodeDnsResolver({ servers: s.config.DNS_SERVERS });
        const r = await verifySendingDomain(s, resolver, { siteId });
        if (r.verified) {
          print(json(), { siteId, domain: r.domain, verified: true, verifiedAt: r.verifiedAt }, `sending domain ${r.domain} verified`);
          return;
        }
        const detail = r.dnsError ? ` (${r.dnsError})` : '';
        print(
          json(),
          { siteId, domain: r.domain, verified: false, reason: r.reason, ...(r.dnsError ? { dnsError: r.dnsError } : {}) },
          `sending domain ${r.domain} not verified: ${WHY_NOT[r.reason]}${r.recordName ? ` at ${r.recordName}` : ''}${detail}`,
        );
        process.exitCode = 1;
      }),
    );
}
