import t from 'tap';
import { threadingHeaders } from '../../src/domain/outreachAgent.ts';

/**
 * A reply's In-Reply-To and References come from the inbound message's headers. Ids the mailer would
 * refuse (a forwarded mail's odd References, an id stored before ingestion checked it) are left out,
 * so the reply is still sent: threaded by what is valid, by its subject otherwise.
 */
t.test('In-Reply-To is the inbound id; References its chain, then the inbound id', async (t) => {
  t.same(threadingHeaders({ externalMessageId: 'c@p.io', references: '<a@p.io> <b@p.io>', inReplyTo: '<b@p.io>' }), {
    inReplyTo: '<c@p.io>',
    references: ['<a@p.io>', '<b@p.io>', '<c@p.io>'],
  });
  t.same(threadingHeaders({ externalMessageId: '<c@p.io>', references: null, inReplyTo: '<b@p.io>' }), { inReplyTo: '<c@p.io>', references: ['<b@p.io>', '<c@p.io>'] }, 'In-Reply-To when there are no References');
  t.same(threadingHeaders({ externalMessageId: null, references: '<a@p.io>', inReplyTo: null }), { inReplyTo: null, references: [] }, 'no inbound id: not threaded');
});

t.test('malformed ids are left out, the rest kept', async (t) => {
  t.same(threadingHeaders({ externalMessageId: 'c@p.io', references: '<a@p.io> <not-an-id> <b@p.io>', inReplyTo: null }), {
    inReplyTo: '<c@p.io>',
    references: ['<a@p.io>', '<b@p.io>', '<c@p.io>'],
  });
  t.same(threadingHeaders({ externalMessageId: 'not a message id', references: '<a@p.io>', inReplyTo: null }), { inReplyTo: null, references: ['<a@p.io>'] }, 'a malformed inbound id');
  t.same(threadingHeaders({ externalMessageId: 'p1@prospect.io>\r\nBcc: x@evil.test', references: 'junk, more junk', inReplyTo: 'x' }), { inReplyTo: null, references: [] }, 'nothing valid: no threading headers');
});

t.test('internationalised ids (RFC 6532) are ingested but left out of the reply: headers stay ASCII without SMTPUTF8', async (t) => {
  t.same(threadingHeaders({ externalMessageId: '<café€@prospect.io>', references: '<a@p.io> <ü@p.io>', inReplyTo: null }), { inReplyTo: null, references: ['<a@p.io>'] });
  t.same(threadingHeaders({ externalMessageId: '<c@p.io>', references: null, inReplyTo: '<日本@p.io>' }), { inReplyTo: '<c@p.io>', references: ['<c@p.io>'] });
});

t.test('a long thread keeps its root and the 19 latest ids in References', async (t) => {
  const chain = Array.from({ length: 30 }, (_, i) => `<m${i}@p.io>`);
  const { references } = threadingHeaders({ externalMessageId: '<m30@p.io>', references: chain.join(' '), inReplyTo: '<m29@p.io>' });
  t.equal(references.length, 20);
  t.equal(references[0], '<m0@p.io>', 'the root stays first');
  t.same(references.slice(1), [...chain.slice(-18), '<m30@p.io>'], 'then the latest, ending with the message answered');
});

t.test('an id too long for one header line (RFC 5322 §2.1.1: 998 characters) is left out', async (t) => {
  const longest = `<${'a'.repeat(978)}@p.io>`; // In-Reply-To: plus this is 998 characters
  const tooLong = `<${'b'.repeat(979)}@p.io>`;
  t.equal(`In-Reply-To: ${longest}`.length, 998);
  t.same(threadingHeaders({ externalMessageId: longest, references: `<a@p.io> ${tooLong}`, inReplyTo: null }), { inReplyTo: longest, references: ['<a@p.io>', longest] });
  t.same(threadingHeaders({ externalMessageId: tooLong, references: '<a@p.io>', inReplyTo: null }), { inReplyTo: null, references: ['<a@p.io>'] });
});
