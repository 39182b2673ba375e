import t from 'tap';
import { criteriaOf, fitsCriteria } from '../../src/domain/prospects.ts';

const garden = { url: 'https://green-thumbs.example', name: 'Green Thumbs Compost Club', notes: null };
const coffee = { url: 'https://beans.example', name: 'Bean Blog', notes: 'espresso reviews' };

t.test('no keywords: every prospect fits', async (t) => {
  const criteria = criteriaOf({ prospectCriteria: { keywords: [], maxProspectsPerRun: 25 } });
  t.ok(fitsCriteria(garden, criteria));
  t.ok(fitsCriteria(coffee, criteria));
  t.equal(criteria.maxProspectsPerRun, 25);
});

t.test('keywords: a prospect fits when one appears in its URL, name or notes, in any case', async (t) => {
  const criteria = criteriaOf({ prospectCriteria: { keywords: ['COMPOST', 'espresso'], maxProspectsPerRun: 3 } });
  t.ok(fitsCriteria(garden, criteria), 'in the name');
  t.ok(fitsCriteria(coffee, criteria), 'in the notes');
  t.notOk(fitsCriteria({ url: 'https://tea.example', name: 'Tea Time', notes: null }, criteria), 'no keyword anywhere');
  t.ok(fitsCriteria({ url: 'https://compost-now.example', name: null, notes: null }, criteria), 'in the URL');
  t.equal(criteria.maxProspectsPerRun, 3);
});

t.test('absent or malformed criteria add no filter and no limit', async (t) => {
  for (const settings of [{}, { prospectCriteria: null }, { prospectCriteria: { keywords: 'compost', maxProspectsPerRun: -1 } }]) {
    const criteria = criteriaOf(settings);
    t.same(criteria.keywords, []);
    t.equal(criteria.maxProspectsPerRun, Number.POSITIVE_INFINITY);
  }
});
