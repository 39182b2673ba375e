import t from 'tap';
import { outreachSettingsSchema } from '../../src/agentWork/settings.ts';
import { replyBody, statusBody } from '../../src/http/routes/conversationActions.ts';
import { expectError, validBody, webhooksPath } from '../helpers/http.ts';
import { bearer, createTenant, startTestApp } from '../helpers/testApp.ts';
import { ingest, PITCH } from '../ingestion/helpers.ts';

/**
 * Text fields hold text: a NUL (or another control character) or an unpaired surrogate is refused
 * with 400 VALIDATION_ERROR, before anything is stored (from a fuzz audit: a reply of one NUL was
 * mailed as such; a lone surrogate was stored but mailed as U+FFFD). A field that must say something
 * is refused when only invisible characters are in it.
 */
const NUL = '\u0000';
const LONE = 'hello \ud800 world';

t.test('the API refuses control characters, unpaired surrogates and invisible-only text, and takes real text', async (t) => {
  const app = await startTestApp();
  t.teardown(() => app.close());
  const tenant = await createTenant(app.services);

  const hook = (label: string) => app.fastify.inject({ method: 'POST', url: webhooksPath(tenant.siteId), headers: bearer(tenant.key), payload: validBody({ label }) });
  for (const label of [NUL, '\u200b', ' \u200b\t', LONE, 'a\u0007b']) expectError(t, await hook(label), 400, 'VALIDATION_ERROR', `label ${JSON.stringify(label)}`);
  t.equal((await hook('CRM 🚀\tsync')).statusCode, 201, 'an emoji (a surrogate pair) and a tab are text');

  const article = (fields: Record<string, string>) =>
    app.fastify.inject({ method: 'PUT', url: `/api/v1/sites/${tenant.siteId}/articles`, headers: bearer(tenant.key), payload: { url: 'https://example.test/a', title: 'T', text: 'body', ...fields } });
  expectError(t, await article({ title: NUL }), 400, 'VALIDATION_ERROR', 'title NUL');
  expectError(t, await article({ title: '\u200b\u200b' }), 400, 'VALIDATION_ERROR', 'title invisible');
  expectError(t, await article({ text: `a${NUL}b` }), 400, 'VALIDATION_ERROR', 'body NUL');
  expectError(t, await article({ text: LONE }), 400, 'VALIDATION_ERROR', 'body unpaired surrogate');
  t.equal((await article({ title: 'Über 😀', text: 'line one\r\nline two\f' })).statusCode, 201);

  for (const fields of [{ subject: `Hi${NUL}` }, { subject: LONE }, { bodyText: `x${NUL}` }, { fromName: LONE }, { bodyHtml: `<p>${NUL}</p>` }, { inReplyTo: `<a${NUL}b@p.io>` }, { references: `<a@p.io> ${LONE}` }, { inReplyTo: 'a\u0007b' }]) {
    const res = await ingest(app.fastify, tenant, { ...PITCH, ...fields });
    expectError(t, res, 400, 'VALIDATION_ERROR', `ingestion ${Object.keys(fields)[0]}`);
    t.match(res.json().error.message, /no NUL or other control character, no unpaired surrogate/);
  }
  t.equal((await ingest(app.fastify, tenant, { ...PITCH, subject: 'Guest post 😀', messageId: '<text-ok@prospect.io>', references: '<a@p.io>\r\n <b@p.io>' })).statusCode, 201, 'a folded References header is text');
  t.equal((await app.services.events.readAll({ limit: 10_000 })).filter((e) => e.type === 'MessageIngested').length, 1, 'only the good ingestion stored');
});

t.test("a reply's text and subject and a status's resolutionOutcome hold text", async (t) => {
  for (const text of [NUL, '\u200b', LONE, 'ok\u001b[31m']) t.notOk(replyBody.safeParse({ text }).success, `reply text ${JSON.stringify(text)}`);
  t.notOk(replyBody.safeParse({ text: 'ok', subject: `Re${NUL}` }).success);
  t.ok(replyBody.safeParse({ text: 'Thanks!\n\n— Ana 🙂' }).success);
  for (const resolutionOutcome of [`${NUL}${'\ud800'}`, '\u200b']) t.notOk(statusBody.safeParse({ status: 'resolved', resolutionOutcome }).success, JSON.stringify(resolutionOutcome));
  t.ok(statusBody.safeParse({ status: 'resolved', resolutionOutcome: 'deal_signed' }).success);
});

t.test("the agent's sender name and signature (From and every reply's sign-off) hold text", async (t) => {
  // A PUT refuses them (agentSettingsSchemas); a run reads values stored before that rule cleaned, not failed.
  t.match(outreachSettingsSchema.parse({ senderName: `Ana${NUL}`, signature: LONE }), { senderName: 'Ana', signature: 'hello \ufffd world' });
  t.match(outreachSettingsSchema.parse({ senderName: 'Ana 🙂', signature: 'Ana\nEditor' }), { senderName: 'Ana 🙂', signature: 'Ana\nEditor' });
});
