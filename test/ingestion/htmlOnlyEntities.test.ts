import t from 'tap';
import { classify } from '../../src/adapters/triage/offlineTriage.ts';
import { htmlToText } from '../../src/domain/articleText.ts';

/**
 * An HTML-only mail's text has every named entity decoded (mail mode of htmlToText, the `entities`
 * package, as mailparser's converter did), not only the ~25 the article text knows: `&euro;50` is
 * money to the offline triage, so a paid-link offer is declined.
 */
t.test('named entities of an HTML-only mail are decoded, so the triage sees the offer', async (t) => {
  const text = htmlToText('<p>Hello, could you add a link to https://beans.example/guide from your article? We offer &euro;50.</p>', { mail: true });
  t.equal(text, 'Hello, could you add a link to https://beans.example/guide from your article? We offer €50.');
  const decision = classify({ subject: 'Link request', bodyText: text, from: 'a@b.example', fromName: null, siteDomain: 'example.test', isReply: false, ask: null });
  t.equal(decision.outcome, 'decline', `a paid link is declined, (got: ${JSON.stringify(decision)})`);
});
