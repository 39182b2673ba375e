import t from 'tap';
import { foldLegacyProspectLimit } from '../../src/domain/agentSettingsSchemas.ts';
import { criteriaOf, fitsCriteria } from '../../src/domain/prospects.ts';

const garden = { url: 'https://green-thumbs.example', name: 'Green Thumbs Compost Club', notes: null };
const coffee = { url: 'https://beans.example', name: 'Bean Blog', notes: 'espresso reviews' };

t.test('no keywords: every prospect fits', async (t) => {
  const criteria = criteriaOf({ prospectCriteria: { keywords: [] } });
  t.ok(fitsCriteria(garden, criteria));
  t.ok(fitsCriteria(coffee, criteria));
  t.same(criteria, { keywords: [] }, 'the per-run limit is not a criterion');
});

t.test('keywords: a prospect fits when one appears in its URL, name or notes, in any case', async (t) => {
  const criteria = criteriaOf({ prospectCriteria: { keywords: ['COMPOST', 'espresso'] } });
  t.ok(fitsCriteria(garden, criteria), 'in the name');
  t.ok(fitsCriteria(coffee, criteria), 'in the notes');
  t.notOk(fitsCriteria({ url: 'https://tea.example', name: 'Tea Time', notes: null }, criteria), 'no keyword anywhere');
  t.ok(fitsCriteria({ url: 'https://compost-now.example', name: null, notes: null }, criteria), 'in the URL');
});

t.test('absent or malformed criteria add no filter', async (t) => {
  for (const settings of [{}, { prospectCriteria: null }, { prospectCriteria: { keywords: 'compost' } }]) t.same(criteriaOf(settings), { keywords: [] });
});

t.test('the legacy prospectCriteria.maxProspectsPerRun folds into maxProspectsPerRun, the lower winning as it did', async (t) => {
  t.same(foldLegacyProspectLimit({ prospectCriteria: { keywords: ['a'], maxProspectsPerRun: 10 } }, 25), { prospectCriteria: { keywords: ['a'] }, maxProspectsPerRun: 10 });
  t.same(foldLegacyProspectLimit({ maxProspectsPerRun: 5, prospectCriteria: { keywords: [], maxProspectsPerRun: 10 } }, 25), { maxProspectsPerRun: 5, prospectCriteria: { keywords: [] } });
  t.same(foldLegacyProspectLimit({ prospectCriteria: { keywords: [], maxProspectsPerRun: 400 } }, 25), { prospectCriteria: { keywords: [] }, maxProspectsPerRun: 25 }, 'never above the top-level value');
  t.same(foldLegacyProspectLimit({ prospectCriteria: { maxProspectsPerRun: -3 } }, 25), {}, 'a malformed legacy value is dropped');
  t.same(foldLegacyProspectLimit({ dailySendCap: 3, prospectCriteria: { maxProspectsPerRun: 4 } }, 25), { dailySendCap: 3, maxProspectsPerRun: 4 }, 'criteria that held only the limit are no criteria: `{}` would replace the stored keywords');
  const current = { dailySendCap: 3, prospectCriteria: { keywords: ['a'] } };
  t.equal(foldLegacyProspectLimit(current, 25), current, 'nothing to fold: the same object');
});
