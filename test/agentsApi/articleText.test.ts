import t from 'tap';
import { decodeEntities, htmlToText, internalLinks, normaliseParagraphs, wordCount } from '../../src/domain/articleText.ts';

const ARTICLE = `<!doctype html><html><head><title>Ignored</title><style>p { color: red }</style>
<script>document.write("<p>not text</p>")</script></head>
<body><nav><a href="/">Home</a></nav>
<article><h1>Composting in a small flat</h1>
<p>Composting   indoors is easier than it looks.
A <a href="https://www.example.test/worm-bins#setup">worm bin</a> fits under a sink.</p>
<!-- <p>an old paragraph</p> -->
<p>Read our <a href='/soil-basics'>soil basics</a> and the <a href="https://other.test/compost">council's guide</a> &amp; tips&nbsp;&mdash; caf&eacute; &#233;t&#xE9;.</p>
<ul><li>Coffee grounds</li><li>Eggshells</li></ul>
<a href="mailto:hi@example.test">mail</a> <a href="javascript:alert(1)">x</a> <a href="#top">top</a>
<p>Next: <a href=http://example.test/worm-bins>worm bins again</a></p>
</article><noscript><p>enable js</p></noscript></body></html>`;

t.test('text: tags, scripts, styles, comments and hidden parts dropped, paragraphs kept', async (t) => {
  const text = htmlToText(ARTICLE);
  t.same(text.split('\n\n'), [
    'Home',
    'Composting in a small flat',
    'Composting indoors is easier than it looks. A worm bin fits under a sink.',
    "Read our soil basics and the council's guide & tips — café été.",
    'Coffee grounds',
    'Eggshells',
    'mail x top',
    'Next: worm bins again',
  ]);
  t.notMatch(text, /not text|color|an old paragraph|enable js|Ignored/);
});

t.test('internal links: resolved against the article, on the site (www. twin too), no fragment, each once', async (t) => {
  t.same(internalLinks(ARTICLE, 'https://example.test/composting', 'example.test'), [
    'https://example.test/',
    'https://www.example.test/worm-bins',
    'https://example.test/soil-basics',
    'http://example.test/worm-bins',
  ]);
  t.same(internalLinks('<a href="https://other.test/">x</a><a href="ftp://example.test/a">y</a>', 'https://example.test/', 'example.test'), []);
  t.same(internalLinks('<p><abbr href="/nope">x</abbr><a class="c" href = "/a?q=1&amp;r=2">y</a><A HREF=/b>z</A></p>', 'https://example.test/x/', 'example.test'), ['https://example.test/a?q=1&r=2', 'https://example.test/b']);
});

t.test('hostile markup: unterminated tags and scripts end the text, huge inputs stay linear', async (t) => {
  t.equal(htmlToText('<p>before</p><script>while(1){}'), 'before');
  t.equal(htmlToText('<p>a</p><div class="x'), 'a');
  const started = Date.now();
  htmlToText('<a '.repeat(50_000) + '<script' + '<p>x'.repeat(50_000));
  internalLinks('<a href="'.repeat(50_000), 'https://example.test/', 'example.test');
  t.ok(Date.now() - started < 5_000, 'no catastrophic backtracking');
});

t.test('a long article stays linear after the scanner has seen large hostile inputs of other shapes', async (t) => {
  // V8 optimises the scanner on what it has seen: after these shapes, a lowercased copy of the document
  // made up front turned the optimised loop quadratic (60,000 paragraphs took 80–150 s, the projection
  // thread stalled, and every write waited for it). Each shape is a body the API takes (500,000 characters).
  const fill = (unit: string) => unit.repeat(Math.floor(499_990 / unit.length));
  const shapes = ['<div>', '<', '<!--', '<a href="https://a1.test/x">x</a>', '<a href=https://a1.test/xxxxxxxxxx>', '<p a="b" ', '<script>', '&amp;', '&#x', '&#99999999999;', ' ', '<a ', '<a href="', '<![CDATA[', 'a ', '<style>', '\n', '<br>'];
  for (const shape of shapes) {
    const html = fill(shape);
    htmlToText(html);
    internalLinks(html, 'https://a1.test/x', 'a1.test');
  }
  for (const unit of ['<p>a</p>', '<div>b</div>']) {
    const started = Date.now();
    const text = htmlToText(unit.repeat(60_000));
    t.equal(text.length, 60_000 * 3 - 2, `${unit} × 60,000: every paragraph`);
    t.ok(Date.now() - started < 5_000, `${unit} × 60,000 in ${Date.now() - started} ms (linear: about 0.1 s)`);
  }
  t.equal(htmlToText('<p>a</p><SCRIPT>x</Script >b<style>y</STYLE>c<script>z</scriptx>d'), 'a\n\nbcd', 'closing tags of hidden elements in any case');
});

t.test('entities, plain text paragraphs and word counts', async (t) => {
  t.equal(decodeEntities('&lt;b&gt; &#0; &#xD800; &unknown;'), '<b>   &unknown;');
  t.equal(normaliseParagraphs('First  line\nsame paragraph\r\n\r\n\n  Second '), 'First line same paragraph\n\nSecond');
  t.equal(wordCount("Don't count -- dashes; 3 words?"), 5);
});
