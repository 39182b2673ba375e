import t from 'tap';
import { TemplateDrafter, replySubject } from '../../src/adapters/drafting/templateDrafter.ts';
import { REPLY_TONES, type DraftInput } from '../../src/ports/drafter.ts';

const ASK = { targetUrl: 'https://soilsmart.io/compost-guide', anchorText: 'compost guide', suggestedSentence: null, sourceUrl: 'https://greenthumb.blog/raised-beds' };
const base: DraftInput = {
  outcome: 'accept',
  subject: 'Guest post idea: companion planting',
  bodyText: 'Hi Anna, I would love to add a link to https://soilsmart.io/compost-guide ...',
  from: 'tom@soilsmart.io',
  fromName: 'Tom Baker',
  asks: [ASK],
  siteDomain: 'greenthumb.blog',
  settings: { senderName: 'Anna Green', signature: 'Anna Green\nEditor, Greenthumb\nhttps://greenthumb.blog', tone: 'friendly' },
};
const drafter = new TemplateDrafter();

t.test('accept: thanks the sender, names the link, says what happens next', async (t) => {
  for (const tone of REPLY_TONES) {
    const draft = await drafter.draft({ ...base, settings: { ...base.settings, tone } });
    t.equal(draft.drafter, 'template-v1');
    t.equal(draft.subject, 'Re: Guest post idea: companion planting');
    t.match(draft.text, /thank/i, `${tone}: thanks`);
    t.match(draft.text, ASK.targetUrl, `${tone}: names the target URL`);
    t.match(draft.text, '"compost guide"', `${tone}: names the anchor`);
    t.match(draft.text, /confirm|once it('s| is) live/i, `${tone}: says what happens next`);
    t.match(draft.text, /\n-- \nAnna Green\nEditor, Greenthumb\nhttps:\/\/greenthumb\.blog\n$/, `${tone}: signature under the delimiter, last`);
    t.match(draft.text, /Anna Green\n\n-- \n/, `${tone}: signed by the sender name`);
  }
  const friendly = await drafter.draft(base);
  t.match(friendly.text, /^Hi Tom,\n/, 'greets by first name');
  t.match(friendly.text, 'on https://greenthumb.blog/raised-beds', 'names the page of the site');
});

t.test('accept without a known opportunity says what happens next without inventing a link', async (t) => {
  const draft = await drafter.draft({ ...base, asks: [] });
  t.notMatch(draft.text, /soilsmart/);
  t.match(draft.text, /follow up on this thread/);
});

t.test('tone changes the wording', async (t) => {
  const texts = await Promise.all(REPLY_TONES.map(async (tone) => (await drafter.draft({ ...base, settings: { ...base.settings, tone } })).text));
  t.equal(new Set(texts).size, 3, 'three different accept drafts');
  const [friendly, formal, brief] = texts as [string, string, string];
  t.match(formal, /^Dear Tom Baker,/);
  t.match(formal, /Kind regards,/);
  t.notMatch(formal, /\b\w+'(ll|d|s|re)\b/, 'formal uses no contractions');
  t.ok(brief.length < friendly.length && brief.length < formal.length, 'brief is the shortest');
  const declines = await Promise.all(
    REPLY_TONES.map(async (tone) => (await drafter.draft({ ...base, outcome: 'decline', settings: { ...base.settings, tone } })).text),
  );
  t.equal(new Set(declines).size, 3, 'three different decline drafts');
});

t.test('decline is polite and makes no promise', async (t) => {
  for (const tone of REPLY_TONES) {
    const draft = await drafter.draft({ ...base, outcome: 'decline', settings: { ...base.settings, tone } });
    const body = draft.text.split('\n-- \n')[0]!;
    t.match(body, /thank/i, `${tone}: thanks`);
    t.match(body, /(not|n't) a fit|unable to accept/i, `${tone}: declines`);
    t.notMatch(body, /\b(will|shall|promise|future|later|next time|soon)\b|'ll\b/i, `${tone}: no commitment`);
    t.notMatch(body, /https?:\/\/|soilsmart|compost guide/i, `${tone}: names no link`);
    t.notMatch(body, /[$€£]|\bprice|\bfee/i, `${tone}: no price`);
    t.equal(draft.subject, 'Re: Guest post idea: companion planting');
  }
});

t.test('subject: Re: once, whatever the original carried', async (t) => {
  t.equal(replySubject('Guest post'), 'Re: Guest post');
  t.equal(replySubject('Re: Guest post'), 'Re: Guest post');
  t.equal(replySubject('RE: re:Guest post'), 'Re: Guest post');
  t.equal(replySubject('Fwd: Re: Guest post'), 'Re: Guest post', 'a forwarded pitch is answered as the original');
  t.equal(replySubject('AW: Re[2]: Gastbeitrag'), 'Re: Gastbeitrag');
  t.equal(replySubject('Reading list for spring'), 'Re: Reading list for spring', 'a word starting with re is kept');
  t.equal(replySubject(''), 'Re: Your message');
  t.equal(replySubject('Hello\r\nBcc: victim@x.io'), 'Re: Hello Bcc: victim@x.io', 'one header line');
  t.ok(replySubject('x'.repeat(5_000)).length <= 204, 'bounded');
  const draft = await drafter.draft({ ...base, subject: 'Re: Re: Guest post idea' });
  t.equal(draft.subject, 'Re: Guest post idea');
  t.notMatch(draft.subject, /Re: Re:/);
});

t.test('without sender name or signature, the site team signs and no delimiter is added', async (t) => {
  const draft = await drafter.draft({ ...base, fromName: null, settings: { senderName: null, signature: null, tone: 'friendly' } });
  t.match(draft.text, /^Hi there,/);
  t.match(draft.text, /Best,\nThe greenthumb\.blog team\n$/);
  t.notMatch(draft.text, /\n-- \n/);
  const formal = await drafter.draft({ ...base, fromName: null, settings: { senderName: '  ', signature: '   ', tone: 'formal' } });
  t.match(formal.text, /^Hello,/);
  t.match(formal.text, /Kind regards,\nThe greenthumb\.blog team\n$/, 'a blank name counts as none');
});

t.test('an accept of a pitch with two asks lists both links, one per line, in every tone', async (t) => {
  const second = { targetUrl: 'https://soilsmart.io/mulch', anchorText: null, suggestedSentence: null, sourceUrl: null };
  for (const tone of REPLY_TONES) {
    const draft = await drafter.draft({ ...base, asks: [ASK, second], settings: { ...base.settings, tone } });
    t.match(draft.text, `\n- ${ASK.targetUrl} with the anchor text "compost guide" on ${ASK.sourceUrl}\n- https://soilsmart.io/mulch on greenthumb.blog\n`, tone);
  }
});

t.test('inbound fields cannot break the layout', async (t) => {
  const draft = await drafter.draft({ ...base, fromName: 'Tom\nBcc: x', asks: [{ ...ASK, anchorText: 'a\r\nb' }] });
  t.match(draft.text, /^Hi Tom,/);
  t.match(draft.text, '"a b"');
});
