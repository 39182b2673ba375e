import t from 'tap';
import { prospectsFromCsv, prospectsFromEntries } from '../../src/domain/prospectList.ts';
import { type ProspectEvent, ProspectRuleError, normaliseProspectUrl, prospectsDecider } from '../../src/domain/prospects.ts';
import { foldCost } from '../helpers/foldCost.ts';
import { given } from '../helpers/givenWhenThen.ts';

const base = { siteId: 's1', teamId: 't1' };
const imported: ProspectEvent = {
  type: 'ProspectsImported',
  data: { ...base, occurredAt: 1, importId: 'i1', prospects: [{ url: 'https://a.example', name: 'A', notes: null }, { url: 'https://b.example', name: null, notes: null }] },
};
const DAY = Date.parse('2026-11-23T09:00:00Z');
const pitched = (url: string, at: number): ProspectEvent => ({ type: 'ProspectPitched', data: { ...base, occurredAt: at, prospectUrl: url, contactEmail: 'x@a.example', conversationId: 'c', runId: 'r' } });

t.test('CSV with a header, quotes, semicolons; one URL per line; errors by line', async (t) => {
  const csv = 'url,name,notes\nhttps://roastweekly.example/,Roast Weekly,"Reviews, mostly espresso"\nbeanblog.example,"The ""Bean"" Blog",\n\n';
  t.same(prospectsFromCsv(csv), {
    ok: true,
    prospects: [
      { url: 'https://roastweekly.example', name: 'Roast Weekly', notes: 'Reviews, mostly espresso' },
      { url: 'https://beanblog.example', name: 'The "Bean" Blog', notes: null },
    ],
  });
  t.same(prospectsFromCsv('Website;Name\r\nhttps://x.example;X\r\n'), { ok: true, prospects: [{ url: 'https://x.example', name: 'X', notes: null }] });
  t.same(prospectsFromCsv('https://one.example\nhttps://two.example/blog#top\nhttps://one.example'), {
    ok: true,
    prospects: [
      { url: 'https://one.example', name: null, notes: null },
      { url: 'https://two.example/blog', name: null, notes: null },
    ],
  }, 'no header; repeats folded');
  t.same(
    prospectsFromCsv('url,name\nhttps://a.prospect.io,"Alice\nhttps://b.prospect.io,Bob\r\nhttps://c.prospect.io,Carol\n'),
    { ok: false, errors: ['line 2: a quoted field is not closed (a " is missing)'] },
    'an unclosed quote is refused, not read as a name holding the rows after it',
  );
  t.same(prospectsFromCsv('url,name\r\nhttps://a.example,"A, ""the"" one\r\nsecond line"\r\nhttps://b.example,"B'), { ok: false, errors: ['line 4: a quoted field is not closed (a " is missing)'] }, 'its line counted across quoted line breaks');
  t.same(
    prospectsFromCsv('url,name,notes\n"https://x.example/,"unterminated\n'),
    { ok: false, errors: ['line 2: text after the closing quote of a field (a " inside a quoted field is written "")'] },
    'text glued after a closing quote is refused, not added to the field',
  );
  t.same(prospectsFromCsv('url,name\n"https://x.example/" ,"X" \n'), { ok: true, prospects: [{ url: 'https://x.example', name: 'X', notes: null }] }, 'spaces after a closing quote are dropped');
  const cut = prospectsFromEntries([{ url: 'https://n.example', name: `Ana\u0000 ${'x'.repeat(194)}😀😀`, notes: 'a\u0007b \udc00' }]);
  t.ok(cut.ok);
  if (cut.ok) {
    t.equal(cut.prospects[0]!.name, `Ana ${'x'.repeat(194)}😀`, 'a NUL dropped; cut at 200 units without halving the emoji');
    t.equal(cut.prospects[0]!.notes, 'ab \ufffd', 'a control character dropped, an unpaired surrogate made U+FFFD');
  }
  t.same(prospectsFromCsv('url\nhttp://plain.example\nnot a url\n'), { ok: false, errors: ['line 2: "http://plain.example" is not an https URL', 'line 3: "not a url" is not an https URL'] });
  t.same(prospectsFromCsv('url\n'), { ok: false, errors: ['the list has no prospects'] });
  t.same(prospectsFromEntries([{ url: 'https://ok.example' }, { url: 'ftp://x.example' }]), { ok: false, errors: ['entry 2: "ftp://x.example" is not an https URL'] });
  t.equal(normaliseProspectUrl('https://user:pw@x.example'), null, 'credentials in a URL are refused');
  t.same(prospectsFromEntries([{ url: 'https://user:pw@x.example/' }]), { ok: false, errors: ['entry 1: "https://user:pw@x.example/" carries credentials (user:password@)'] }, 'and named as the reason');
  t.equal(normaliseProspectUrl('https://[2001:db8::1]/'), 'https://[2001:db8::1]', 'an IPv6 literal is an address as an IPv4 one is (the fetcher decides whether it may be reached)');
  t.equal(normaliseProspectUrl('https://intranet/'), null, 'a single-label name is not');
});

t.test('importing: new prospects recorded, known unchanged ones left out, a name change recorded', async (t) => {
  given(prospectsDecider, [imported])
    .when({ type: 'ImportProspects', data: { ...base, occurredAt: 2, importId: 'i2', prospects: [{ url: 'https://a.example', name: 'A', notes: null }] } })
    .then([]);
  given(prospectsDecider, [imported])
    .when({ type: 'ImportProspects', data: { ...base, occurredAt: 2, importId: 'i2', prospects: [{ url: 'https://a.example', name: 'A2', notes: null }, { url: 'https://c.example', name: null, notes: 'n' }] } })
    .then([{ type: 'ProspectsImported', data: { ...base, occurredAt: 2, importId: 'i2', prospects: [{ url: 'https://a.example', name: 'A2', notes: null }, { url: 'https://c.example', name: null, notes: 'n' }] } }]);
  const state = given(prospectsDecider, [imported, pitched('https://a.example', DAY)])
    .when({ type: 'ImportProspects', data: { ...base, occurredAt: 3, importId: 'i3', prospects: [{ url: 'https://a.example', name: 'Renamed', notes: null }] } })
    .then([{ type: 'ProspectsImported', data: { ...base, occurredAt: 3, importId: 'i3', prospects: [{ url: 'https://a.example', name: 'Renamed', notes: null }] } }]);
  t.equal(state.prospects.get('https://a.example')?.status, 'pitched', 're-importing never resets what was done');
});

t.test('the daily send cap: counted per UTC day, refused at the cap, free again the next day', async (t) => {
  const pitch = (at: number, cap: number) => ({
    type: 'RecordPitch' as const,
    data: { ...base, occurredAt: at, prospectUrl: 'https://b.example', contactEmail: 'x@b.example', conversationId: 'c2', runId: 'r2', dailySendCap: cap },
  });
  given(prospectsDecider, [imported, pitched('https://a.example', DAY)]).when(pitch(DAY + 3_600_000, 1)).thenThrows(ProspectRuleError, /daily send cap \(1\) is reached for 2026-11-23/);
  given(prospectsDecider, [imported, pitched('https://a.example', DAY)])
    .when(pitch(DAY + 86_400_000, 1))
    .then([{ type: 'ProspectPitched', data: { ...base, occurredAt: DAY + 86_400_000, prospectUrl: 'https://b.example', contactEmail: 'x@b.example', conversationId: 'c2', runId: 'r2' } }]);
  given(prospectsDecider, [imported, pitched('https://b.example', DAY)]).when(pitch(DAY + 1, 5)).then([]);
  given(prospectsDecider, [imported]).when({ ...pitch(DAY, 5), data: { ...pitch(DAY, 5).data, prospectUrl: 'https://zzz.example' } }).thenThrows(ProspectRuleError, /no prospect/);
  given(prospectsDecider, [imported])
    .when({ type: 'SkipProspect', data: { ...base, occurredAt: 5, prospectUrl: 'https://a.example', reason: 'contact_suppressed', detail: 'd', runId: 'r' } })
    .then([{ type: 'ProspectSkipped', data: { ...base, occurredAt: 5, prospectUrl: 'https://a.example', reason: 'contact_suppressed', detail: 'd', runId: 'r' } }]);
});

t.test('a site with thousands of prospects: pitches cost the same to fold late as early, the cap still counts the day', async (t) => {
  const urls = Array.from({ length: 8_000 }, (_, i) => `https://p${i}.example`);
  const many: ProspectEvent = { type: 'ProspectsImported', data: { ...base, occurredAt: 1, importId: 'i2', prospects: [...urls, 'https://new.example'].map((url) => ({ url, name: null, notes: null })) } };
  // Twenty pitches a day, a minute apart.
  const events: ProspectEvent[] = [many, ...urls.map((url, i) => pitched(url, DAY + Math.floor(i / 20) * 86_400_000 + (i % 20) * 60_000))];
  const state = events.reduce(prospectsDecider.evolve, prospectsDecider.initialState());
  t.equal([...state.prospects.values()].filter((p) => p.status === 'pitched').length, 8_000);
  t.equal([...state.prospects.keys()][0], 'https://p0.example', 'in import order');
  const lastDay = DAY + 399 * 86_400_000;
  t.throws(() => prospectsDecider.decide({ type: 'RecordPitch', data: { ...base, occurredAt: lastDay + 3_600_000, prospectUrl: 'https://new.example', contactEmail: 'x', conversationId: 'c', runId: 'r', dailySendCap: 20 } }, state), /daily send cap \(20\)/);
  t.equal(prospectsDecider.decide({ type: 'RecordPitch', data: { ...base, occurredAt: lastDay + 86_400_000, prospectUrl: 'https://new.example', contactEmail: 'x', conversationId: 'c', runId: 'r', dailySendCap: 20 } }, state).length, 1, 'the next day is free');
  // Copying the prospects map (and the pitch times) per event made the fold quadratic (5,000 pitches: 3 s).
  const early = foldCost(prospectsDecider, events, 1 + 500, 500);
  const late = foldCost(prospectsDecider, events, 1 + 7_500, 500);
  t.ok(late < early * 4, `500 pitches after 7,500 fold in ${late.toFixed(2)} ms, after 500 in ${early.toFixed(2)} ms`);
});
