import t from 'tap';
import { OfflineTriage, ownText } from '../../src/adapters/triage/offlineTriage.ts';
import { SITE, TRIAGE_CASES } from './triageTable.ts';

t.test('offline triage classifies every message of the table as a site owner would', async (t) => {
  t.ok(TRIAGE_CASES.length >= 30, `${TRIAGE_CASES.length} messages`);
  for (const outcome of ['accept', 'decline', 'needs_human', 'opt_out'] as const) {
    t.ok(TRIAGE_CASES.filter((c) => c.expected === outcome).length >= 5, `at least 5 messages expect ${outcome}`);
  }
  const triage = new OfflineTriage();
  for (const c of TRIAGE_CASES) {
    const decision = await triage.triage(c.input);
    t.equal(decision.outcome, c.expected, `${c.heldOut ? '[held out] ' : ''}${c.name} (reasons: ${decision.reasons.join(', ')})`);
    t.equal(decision.classifier, 'offline-v1');
    t.ok(decision.reasons.length > 0, 'gives a reason');
  }
});

t.test('reasons name what decided', async (t) => {
  const triage = new OfflineTriage();
  const base = { from: 'a@b.io', fromName: null, siteDomain: SITE, isReply: false, ask: null };
  t.same((await triage.triage({ ...base, subject: 'x', bodyText: 'Please unsubscribe me.' })).reasons, ['opt_out_phrase']);
  t.same((await triage.triage({ ...base, subject: 'x', bodyText: 'Guest post on our casino site?' })).reasons, ['prohibited_niche']);
  t.same((await triage.triage({ ...base, subject: 'x', bodyText: 'Our sponsored post costs $90.' })).reasons, ['paid_link']);
  const accepted = await triage.triage({
    ...base,
    subject: 'Guest post',
    bodyText: 'I would love to write a guest post linking to https://other.io/guide.',
  });
  t.same(accepted, { outcome: 'accept', classifier: 'offline-v1', reasons: ['guest_post', 'link_request', 'target_url_named'] });
  const ownSite = await triage.triage({ ...base, subject: 'Guest post', bodyText: `Guest post linking to https://www.${SITE}/a?` });
  t.same(ownSite.reasons, ['guest_post', 'link_request', 'no_target_url'], 'a URL of the site itself is no target');
});

t.test("the sender's own words: quoted history and signature are not read", async (t) => {
  t.equal(ownText('Yes please.\n\nOn Mon, 3 Jun 2024, Anna <a@b.io>\nwrote:\n> unsubscribe here'), 'Yes please.\n\n');
  t.equal(ownText('Fine.\n> quoted\nMore.'), 'Fine.\nMore.');
  t.equal(ownText('Hi\n-- \nJane\nUnsubscribe'), 'Hi\n');
  t.equal(ownText('Ok\n-----Original Message-----\nFrom: x'), 'Ok\n');
});

t.test('a very large body is classified in bounded time', async (t) => {
  const triage = new OfflineTriage();
  const body = 'Would you consider linking to https://a.io/x? '.repeat(6_000) + 'unsubscribe';
  const started = performance.now();
  const decision = await triage.triage({ subject: 's', bodyText: body, from: 'a@b.io', fromName: null, siteDomain: SITE, isReply: false, ask: null });
  const ms = performance.now() - started;
  t.equal(decision.outcome, 'accept', 'text past the bound is not read');
  t.ok(ms < 1_000, `took ${Math.round(ms)} ms`);
});
