import t from 'tap';
import { ARTICLES, SITE } from '../agentWork/corpus/homeCoffee.ts';
import { html, startSite } from '../agentWork/sites.ts';
import { startSmtpSink } from '../agent/smtpSink.ts';
import { testCertificate } from '../webhooks/helpers.ts';
import { startProduct } from './productHelpers.ts';

// outreach through the product path: prospects imported over REST, contacts found on local HTTPS
// prospect sites by the runner's page fetcher, the pitch sent through OUTBOUND_SMTP_URL to a real
// SMTP sink, the opportunity recorded under the conversation the pitch opened.
t.test('a run pitches the prospect whose contact it finds, skips the suppressed one, and records the pitch', async (t) => {
  const { caFile } = await testCertificate();
  const sink = await startSmtpSink();
  t.teardown(() => sink.close());
  const roast = await startSite({
    '/': { body: html('Roast Weekly: espresso and burr grinder reviews', '<h1>Grinder shoot-out</h1><a href="/contact-us/">Contact</a>') },
    '/contact-us/': { body: html('Contact', '<p>Pitches to <a href="mailto:editor@roastweekly.example">our editor</a>.</p>') },
  });
  const bean = await startSite({ '/': { body: html('The Bean Blog', '<a href="mailto:hello@beanblog.example">Say hello</a>') } });
  t.teardown(async () => {
    await roast.close();
    await bean.close();
  });
  const product = await startProduct(t, {
    plan: 'advanced',
    domain: new URL(SITE).hostname,
    sendingDomainVerified: true,
    env: { OUTBOUND_SMTP_URL: sink.url, WEBHOOK_ALLOWED_RANGES: '127.0.0.1/32', WEBHOOK_EXTRA_CA_FILE: caFile },
  });
  const { inject, site } = product;
  for (const a of ARTICLES) await product.putArticle(a);

  const suppressed = await inject('POST', `${site}/outreach/suppressions`, { email: 'hello@beanblog.example', reason: 'manual' });
  t.equal(suppressed.statusCode, 201, suppressed.body);
  const imported = await inject('POST', `${site}/agents/outreach/prospects`, {
    prospects: [
      { url: roast.origin, name: 'Roast Weekly', notes: 'espresso gear reviews' },
      { url: bean.origin, name: 'The Bean Blog' },
    ],
  });
  t.equal(imported.statusCode, 201, imported.body);
  t.match(imported.json(), { imported: 2 });

  await product.activate('outreach', { senderName: 'Mia from Brew at Home', signature: 'Mia\nbrewathome.example', dailySendCap: 10 });
  const listed = (await inject('GET', `${site}/agents`)).json().agents as { agentKey: string; settings: Record<string, unknown> }[];
  t.match(listed.find((a) => a.agentKey === 'outreach')?.settings, { senderName: 'Mia from Brew at Home', signature: 'Mia\nbrewathome.example', dailySendCap: 10 }, 'GET agents shows what PUT set');
  const run = await product.runToEnd('outreach');
  t.match(run, { status: 'succeeded', counts: { pitchesSent: 1, suppressed: 1 } });

  t.equal(sink.received.length, 1, 'one pitch, none to the suppressed address');
  const mail = sink.received[0]!;
  t.same(mail.rcptTo, ['editor@roastweekly.example']);
  t.equal(mail.parsed.from?.value[0]?.name, 'Mia from Brew at Home');
  t.equal(mail.parsed.from?.value[0]?.address, 'outreach@brewathome.example');
  t.match(mail.parsed.text, /https:\/\/brewathome\.example\/burr-grinder\//, 'it offers the grinder article to a grinder site');
  t.match(mail.parsed.text, /Mia\nbrewathome\.example\s*$/);

  const found = await product.opportunities('outreach');
  t.equal(found.length, 1);
  const opportunity = found[0]!;
  t.same(run.opportunityIds, [opportunity.id], 'the run recorded its proposal under the opportunity the pitch opened');
  t.match(opportunity, {
    kind: 'outreach',
    entrySource: 'outbound_pitch',
    runId: run.id,
    targetUrl: `${SITE}/burr-grinder/`,
    sourceUrl: roast.origin,
    details: { kind: 'outreach', prospectUrl: roast.origin, contactEmail: 'editor@roastweekly.example', offeredUrl: `${SITE}/burr-grinder/`, opportunityId: opportunity.id },
  });
  t.ok(opportunity.conversationId, 'with its conversation');
  t.equal((opportunity.details as { conversationId: string }).conversationId, opportunity.conversationId);
  const conversation = await inject('GET', `${site}/outreach/conversations/${opportunity.conversationId}`);
  t.equal(conversation.statusCode, 200, conversation.body);
  t.match(conversation.json(), { conversation: { entrySource: 'outbound_pitch', contactEmail: 'editor@roastweekly.example', subject: mail.parsed.subject } });
  t.notOk(sink.received.some((m) => m.rcptTo.includes('hello@beanblog.example')), 'the suppressed address got nothing');
});
