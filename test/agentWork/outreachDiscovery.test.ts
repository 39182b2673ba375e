import t from 'tap';
import { chooseContact, contactPageLinks, decodeEntities, extractEmails, pageTopicText } from '../../src/domain/agentWork/contactEmail.ts';
import { bestArticleFor, composePitch } from '../../src/domain/agentWork/pitch.ts';
import { robotsAllows } from '../../src/domain/agentWork/robots.ts';
import { ARTICLES, byId } from './corpus/homeCoffee.ts';

t.test('addresses: mailto, written out, obfuscated, entity-encoded', async (t) => {
  const html = `
    <a href="mailto:Editor@RoastWeekly.example?subject=Hi">Write to us</a>
    <p>Press: press@roastweekly.example. Or jane [at] roastweekly [dot] example, tom(at)roastweekly.example</p>
    <p>Sales: sales&#64;roastweekly&#46;example</p>
    <img src="logo@2x.png"> <script>var x = "tracking@analytics.example"</script>`;
  t.same(extractEmails(html), [
    'editor@roastweekly.example',
    'press@roastweekly.example',
    'sales@roastweekly.example',
    'jane@roastweekly.example',
    'tom@roastweekly.example',
  ]);
  t.same(extractEmails('<p>No contact here, we are at home at night.</p>'), [], '"at" in prose is no address');
  t.equal(decodeEntities('a&amp;b &#x40; &commat;'), 'a&b @ @');
});

t.test('the contact: on the prospect domain first, a role address next, never no-reply', async (t) => {
  const url = 'https://www.roastweekly.example/';
  t.same(chooseContact(['jane.doe@gmail.com', 'info@roastweekly.example', 'editor@roastweekly.example'], url), { email: 'editor@roastweekly.example', onDomain: true });
  t.same(chooseContact(['noreply@roastweekly.example', 'jane.doe@gmail.com'], url), { email: 'jane.doe@gmail.com', onDomain: false });
  t.same(chooseContact(['mike@blog.roastweekly.example'], url), { email: 'mike@blog.roastweekly.example', onDomain: true }, 'a subdomain of the prospect');
  t.equal(chooseContact(['no-reply@roastweekly.example'], url), null);
});

t.test('contact and about pages linked from the home page, same site only', async (t) => {
  const html = `<nav><a href="/blog/">Blog</a><a href="/about-us/">About</a><a href="https://roastweekly.example/get-in-touch">Get in touch</a>
    <a href="https://twitter.example/contact">Twitter</a><a href="mailto:x@y.example">mail</a></nav>`;
  t.same(contactPageLinks(html, 'https://roastweekly.example/'), ['https://roastweekly.example/get-in-touch', 'https://roastweekly.example/about-us/']);
  t.equal(pageTopicText('<title>Roast Weekly</title><meta name="description" content="Espresso &amp; grinder reviews"><h1>Latest</h1>'), 'Roast Weekly. Espresso & grinder reviews. Latest');
});

t.test('robots.txt: our group over *, longest rule wins, Allow on a tie, wildcards', async (t) => {
  const robots = `# comment
User-agent: *
Disallow: /

User-agent: OutreachServiceBot
User-agent: otherbot
Disallow: /private/
Allow: /private/contact$
Disallow: /*.pdf$
`;
  const ua = 'OutreachServiceBot/1.0';
  t.ok(robotsAllows(robots, ua, '/'));
  t.notOk(robotsAllows(robots, ua, '/private/team'));
  t.ok(robotsAllows(robots, ua, '/private/contact'));
  t.notOk(robotsAllows(robots, ua, '/private/contact/more'), '$ anchors the end');
  t.notOk(robotsAllows(robots, ua, '/files/rates.pdf'));
  t.notOk(robotsAllows(robots, 'SomeoneElse/2.0', '/'), 'others fall under *');
  t.ok(robotsAllows('', ua, '/anything'), 'no robots.txt: everything allowed');
  t.ok(robotsAllows('User-agent: *\nDisallow:\n', ua, '/x'), 'an empty Disallow allows');
  t.ok(robotsAllows('User-agent: *\nDisallow: /contact\nAllow: /contact\n', ua, '/contact'), 'a tie goes to Allow');
});

t.test('the pitch offers the best-matching article and signs as configured', async (t) => {
  const article = bestArticleFor('Roast Weekly. Espresso machine reviews and grinder tests. Burr grinder shoot-out', ARTICLES);
  t.equal(article?.id, 'a02', 'the burr grinder article');
  t.equal(bestArticleFor('Knitting patterns for winter', ARTICLES), null);
  const pitch = composePitch({
    siteDomain: 'brewathome.example',
    prospectName: 'Roast Weekly',
    prospectUrl: 'https://roastweekly.example',
    article: byId('a02'),
    senderName: 'Mia',
    signature: 'Mia Schmidt\nBrew at Home',
  });
  t.equal(pitch.subject, 'A resource for Roast Weekly: Choosing a Burr Grinder');
  t.match(pitch.text, /^Hi Roast Weekly,\n/);
  t.match(pitch.text, /"Choosing a Burr Grinder" on brewathome\.example:\nhttps:\/\/brewathome\.example\/burr-grinder\//);
  t.match(pitch.text, /reply "no thanks"/);
  t.ok(pitch.text.endsWith('Mia Schmidt\nBrew at Home'));
  const plain = composePitch({ siteDomain: 'brewathome.example', prospectName: null, prospectUrl: 'https://www.beans.example/x', article: null, senderName: null, signature: null });
  t.equal(plain.subject, 'brewathome.example and beans.example');
  t.ok(plain.text.endsWith('Best,\nbrewathome.example'));
});
