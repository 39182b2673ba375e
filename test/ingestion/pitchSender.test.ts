import t from 'tap';
import { onDomain, pitchSender } from '../../src/domain/forwarded.ts';

t.test("an address on the site's domain: the domain, with or without www., a subdomain, or the domain the site is under", async (t) => {
  for (const [address, site, on] of [
    ['ed@acme.test', 'acme.test', true],
    ['ed@ACME.test', 'www.acme.test', true],
    ['ed@mail.acme.test', 'acme.test', true],
    ['ed@acme.test', 'blog.acme.test', true],
    ['ed@notacme.test', 'acme.test', false],
    ['ed@acme.test.evil.io', 'acme.test', false],
    ['ed@test', 'acme.test', false],
  ] as const) {
    t.equal(onDomain(address, site), on, `${address} on ${site}`);
  }
});

t.test('the block names the prospect only for a member, and never one of the site itself', async (t) => {
  const mail = { from: 'ed@acme.test', fromName: 'Ed', forwardedFrom: { address: 'jane@prospect.io', name: 'Jane' } };
  t.same(pitchSender(mail, { domain: 'acme.test' }, true), { from: 'jane@prospect.io', fromName: 'Jane', forwarded: true });
  t.same(pitchSender(mail, { domain: 'acme.test' }, false), { from: 'ed@acme.test', fromName: 'Ed', forwarded: false });
  t.same(pitchSender({ ...mail, forwardedFrom: { address: 'outreach@www.acme.test', name: null } }, { domain: 'www.acme.test' }, true).forwarded, false);
});
