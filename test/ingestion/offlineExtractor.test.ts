import t from 'tap';
import { MAX_ASKS, extractAsks } from '../../src/adapters/extractor/offlineExtractor.ts';
import { forwardingToken, originalSender } from '../../src/domain/forwarded.ts';
import { MAX_THREAD_CANDIDATES, threadCandidates } from '../../src/domain/ingestion.ts';

const run = (bodyText: string) => extractAsks({ subject: '', bodyText, from: 'x@y.io', siteDomain: 'mysite.com' });

t.test('offline extractor on typical pitches', async (t) => {
  t.same(
    run('Hey! Your post https://www.mysite.com/best-crm-tools is great. Could you add a link to https://crmly.io/features? Anchor text: CRM features. Proposed sentence: "Tools like Crmly cover the basics."'),
    [{ targetUrl: 'https://crmly.io/features', anchorText: 'CRM features', suggestedSentence: 'Tools like Crmly cover the basics.', sourceUrl: 'https://www.mysite.com/best-crm-tools' }],
  );
  t.same(
    run('Hello, we noticed you mention composting in https://mysite.com/compost. We wrote a detailed guide (https://soil.io/guide) - would you consider referencing it? You could use "composting guide" as the anchor.'),
    [{ targetUrl: 'https://soil.io/guide', anchorText: 'composting guide', suggestedSentence: null, sourceUrl: 'https://mysite.com/compost' }],
  );
  t.same(run('Hi,\nTarget URL: https://a.io/x\nAnchor: best shoes\nSource: https://mysite.com/shoes\nThanks'), [
    { targetUrl: 'https://a.io/x', anchorText: 'best shoes', suggestedSentence: null, sourceUrl: 'https://mysite.com/shoes' },
  ]);
});

t.test('unactionable messages give no asks', async (t) => {
  t.same(run('Hi, I run a blog about gardening. Would you be interested in a guest post? Let me know. https://gardenblog.io'), [], 'no link request');
  t.same(run('Great content! Manage your link preferences: https://list.io/unsubscribe?id=1'), [], 'only an unsubscribe link');
  t.same(run('Could you link to your own page https://mysite.com/a from https://mysite.com/b?'), [], 'only URLs of the site itself');
  t.same(run(''), []);
});

t.test('a body of thousands of distinct URLs: at most MAX_ASKS asks, in linear time', async (t) => {
  // About 230 KB, under the ingestion body limit. Unbounded, this took tens of seconds of event loop
  // and would have opened one conversation per URL.
  const body = 'Please link to these: ' + Array.from({ length: 12_000 }, (_, i) => `https://spam.io/${i}`).join(' ');
  const started = performance.now();
  const asks = run(body);
  const ms = performance.now() - started;
  t.equal(asks.length, MAX_ASKS, `capped at ${MAX_ASKS}`);
  t.equal(asks[0]!.targetUrl, 'https://spam.io/0', 'the first asks are kept, in order');
  t.ok(ms < 3_000, `took ${Math.round(ms)} ms`);
});

t.test('forwarded sender, forwarding token, thread candidates', async (t) => {
  t.same(originalSender('fyi\n---------- Forwarded message ---------\nFrom: "Jane P" <Jane@Prospect.io>\nDate: x'), { address: 'jane@prospect.io', name: 'Jane P' });
  t.same(originalSender('Begin forwarded message:\n\nFrom: sam@x.io\n'), { address: 'sam@x.io', name: null });
  t.equal(originalSender('From: not forwarded <a@b.io>'), null);
  t.equal(forwardingToken('forward+ABC123@Inbound.Test', 'inbound.test'), 'abc123');
  t.equal(forwardingToken('forward+abc@other.test', 'inbound.test'), null);
  t.equal(forwardingToken('hello@inbound.test', 'inbound.test'), null);
  t.same(threadCandidates('<c@x>', '<a@x> <b@x> <c@x>'), ['c@x', 'b@x', 'a@x']);
  t.same(threadCandidates(null, 'a@x, b@x'), ['b@x', 'a@x']);
  t.same(threadCandidates(null, null), []);
  const chain = Array.from({ length: 5_000 }, (_, i) => `<${i}@x>`).join(' ');
  const bounded = threadCandidates('<r@x>', chain);
  t.equal(bounded.length, MAX_THREAD_CANDIDATES, 'a huge References chain is looked up only in its newest ids');
  t.same(bounded.slice(0, 3), ['r@x', '4999@x', '4998@x'], 'In-Reply-To first, then References newest first');
});
