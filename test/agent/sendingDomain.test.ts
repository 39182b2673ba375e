import t from 'tap';
import { createNodeDnsResolver } from '../../src/adapters/dns/nodeDnsResolver.ts';
import { issueSendingDomainToken, verifySendingDomain } from '../../src/commands/sendingDomain.ts';
import { TenancyError, changeSiteSettings } from '../../src/commands/tenancy.ts';
import { loadConfig } from '../../src/config.ts';
import type { SiteDoc } from '../../src/readModels/sites.ts';
import { startDnsResponder } from '../helpers/dnsResponder.ts';
import { createTenant, startTestApp } from '../helpers/testApp.ts';

t.test('the node DNS adapter against the local responder', async (t) => {
  const dns = await startDnsResponder({
    'chunks.example.test': [['v=spf1 -all'], ['part one ', 'part two']],
    'empty.example.test': [],
  });
  t.teardown(() => dns.close());
  const resolver = createNodeDnsResolver({ servers: [dns.server] });
  t.same(await resolver.resolveTxt('chunks.example.test'), [['v=spf1 -all'], ['part one ', 'part two']], 'records and their character-strings');
  t.same(await resolver.resolveTxt('Chunks.Example.Test'), [['v=spf1 -all'], ['part one ', 'part two']], 'names are case-insensitive');
  t.same(await resolver.resolveTxt('empty.example.test'), [], 'a name without TXT records (NODATA) is an empty list');
  t.same(await resolver.resolveTxt('absent.example.test'), [], 'a name that does not exist (NXDOMAIN) is an empty list');
  dns.failWith(2);
  await t.rejects(resolver.resolveTxt('chunks.example.test'), { code: 'ESERVFAIL' }, 'a server failure rejects');
  dns.failWith(null);
});

t.test('DNS_SERVERS is a comma-separated list of ip, ip:port or [ipv6]:port', async (t) => {
  t.same(loadConfig({ DNS_SERVERS: '127.0.0.1:5353, 9.9.9.9,[::1]:53,2001:db8::1' }).DNS_SERVERS, ['127.0.0.1:5353', '9.9.9.9', '[::1]:53', '2001:db8::1']);
  t.equal(loadConfig({}).DNS_SERVERS, undefined);
  for (const bad of ['dns.example.test', '127.0.0.1:99999', '8.8.8.8:0', '[::1]:0', '1.2.3', ' , ']) {
    t.throws(() => loadConfig({ DNS_SERVERS: bad }), { name: 'Error', message: /DNS_SERVERS/ }, bad);
  }
});

t.test('issue, check before the record exists, publish it, check again: verified, and the site setting follows', async (t) => {
  const dns = await startDnsResponder();
  const app = await startTestApp({ env: { DNS_SERVERS: dns.server } });
  t.teardown(async () => {
    await app.close();
    await dns.close();
  });
  const s = app.services;
  const resolver = createNodeDnsResolver({ servers: s.config.DNS_SERVERS });
  const { siteId } = await createTenant(s);

  const none = await verifySendingDomain(s, resolver, { siteId });
  t.match(none, { verified: false, reason: 'no_token_issued', recordName: null });
  t.same(dns.queries, [], 'nothing to look up before a token exists');

  const record = await issueSendingDomainToken(s, { siteId });
  t.match(record, { siteId, domain: 'example.test', recordName: '_outreach-verification.example.test', issued: true });
  t.match(record.recordValue, /^outreach-verification=[0-9a-f]{32}$/);
  const again = await issueSendingDomainToken(s, { siteId });
  t.same(again, { ...record, issued: false }, 'asking again shows the outstanding record, not a new token');

  t.match(await verifySendingDomain(s, resolver, { siteId }), { verified: false, reason: 'record_missing', recordName: record.recordName });
  t.same(dns.queries, ['_outreach-verification.example.test']);

  dns.txt.set(record.recordName, [['outreach-verification=0000000000000000ffffffffffffffff']]);
  t.match(await verifySendingDomain(s, resolver, { siteId }), { verified: false, reason: 'record_mismatch' });

  dns.failWith(2);
  t.match(await verifySendingDomain(s, resolver, { siteId }), { verified: false, reason: 'dns_error', dnsError: 'ESERVFAIL' });
  dns.failWith(null);

  await s.projections.catchUp();
  t.equal((await s.readModels.get<SiteDoc>('sites', siteId))?.sendingDomainVerified, false, 'not verified yet');

  dns.txt.set(record.recordName, [['v=spf1 -all'], [record.recordValue]]);
  const ok = await verifySendingDomain(s, resolver, { siteId });
  t.match(ok, { verified: true, domain: 'example.test', recordName: record.recordName, verifiedAt: /^\d{4}-\d\d-\d\dT/ });

  await s.projections.catchUp();
  t.equal((await s.readModels.get<SiteDoc>('sites', siteId))?.sendingDomainVerified, true, "the site's sendingDomainVerified is set");
  const stream = await s.events.readStream(`sendingDomainVerification-${siteId}`);
  t.same(
    stream.map((e) => [e.type, (e.data as { reason?: string }).reason ?? null]),
    [
      ['SendingDomainCheckFailed', 'no_token_issued'],
      ['SendingDomainTokenIssued', null],
      ['SendingDomainCheckFailed', 'record_missing'],
      ['SendingDomainCheckFailed', 'record_mismatch'],
      ['SendingDomainCheckFailed', 'dns_error'],
      ['SendingDomainVerified', null],
    ],
    'every check is on the verification stream for auditors',
  );
  const site = await s.events.readStream(`site-${siteId}`);
  t.match(site.at(-1), { type: 'SiteSettingsChanged', data: { changes: { sendingDomainVerified: true } } });

  t.test('a renewed token replaces the old one: the old record no longer verifies', async (t) => {
    const renewed = await issueSendingDomainToken(s, { siteId, renew: true });
    t.equal(renewed.issued, true);
    t.not(renewed.recordValue, record.recordValue);
    t.match(await verifySendingDomain(s, resolver, { siteId }), { verified: false, reason: 'record_mismatch' });
    await s.projections.catchUp();
    t.equal((await s.readModels.get<SiteDoc>('sites', siteId))?.sendingDomainVerified, true, 'a failed check does not withdraw the setting');
  });

  t.test('the operator override still works without DNS', async (t) => {
    const other = await createTenant(s);
    await changeSiteSettings(s, { siteId: other.siteId, changes: { sendingDomainVerified: true } });
    await s.projections.catchUp();
    t.equal((await s.readModels.get<SiteDoc>('sites', other.siteId))?.sendingDomainVerified, true);
  });

  t.test('an unknown site is refused', async (t) => {
    for (const attempt of [issueSendingDomainToken(s, { siteId: 'NOPE' }), verifySendingDomain(s, resolver, { siteId: 'NOPE' })]) {
      const error = await attempt.then(() => null, (e: unknown) => e);
      t.ok(error instanceof TenancyError, String(error));
    }
  });
});

t.test('a DNS server that does not answer is a dns_error, not a missing record', async (t) => {
  const dns = await startDnsResponder();
  const port = dns.port;
  await dns.close(); // nothing listens there now: the query is refused or times out
  const app = await startTestApp();
  t.teardown(() => app.close());
  const s = app.services;
  const { siteId } = await createTenant(s);
  await issueSendingDomainToken(s, { siteId });
  const resolver = createNodeDnsResolver({ servers: [`127.0.0.1:${port}`], timeoutMs: 200, tries: 1 });
  t.match(await verifySendingDomain(s, resolver, { siteId }), { verified: false, reason: 'dns_error' });
});
