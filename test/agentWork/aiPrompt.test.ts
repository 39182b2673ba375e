import t from 'tap';
import { bestAnswer, proposeAiPrompts, questionFromTitle } from '../../src/domain/agentWork/aiPrompt.ts';
import { ARTICLES, SITE } from './corpus/homeCoffee.ts';

const proposals = proposeAiPrompts(ARTICLES, { seedKeywords: ['moka pot', 'Burr grinder'], maxQuestions: 50 });
const ask = (q: string) => proposals.find((p) => p.question === q);

t.test('seed keywords become questions, answered by the article that covers them or by nobody', async (t) => {
  t.same(proposals[0], {
    kind: 'ai_prompt',
    question: 'What is the best moka pot?',
    articleId: null,
    url: null,
    rationale: 'Seed keyword "moka pot": no article covers it, so assistants will cite someone else. Write one.',
  });
  t.same(ask('What is the best burr grinder?'), {
    kind: 'ai_prompt',
    question: 'What is the best burr grinder?',
    articleId: 'a02',
    url: `${SITE}/burr-grinder/`,
    rationale: 'Seed keyword "Burr grinder": "Choosing a Burr Grinder" covers it and should be the answer.',
  });
});

t.test("titles become the questions people type, answered by that article", async (t) => {
  const expected: [string, string][] = [
    ['How do I dial in espresso at home?', 'a01'],
    ['How do I choose a burr grinder?', 'a02'],
    ['How do I make cold brew concentrate?', 'a04'],
    ['How do I get started with pour over coffee?', 'a05'],
    ['What is the best water temperature for brewing coffee?', 'a06'],
    ['How do I store coffee beans to keep them fresh?', 'a07'],
    ['What are roast levels?', 'a08'],
    ['How do I descale my espresso machine?', 'a10'],
    ['What is a good AeroPress recipe for one cup?', 'a11'],
    ['What is the coffee to water ratio?', 'a12'],
  ];
  for (const [question, id] of expected) t.equal(ask(question)?.articleId, id, question);
});

t.test('headings that ask a question, and comparisons between two of the site topics', async (t) => {
  t.equal(ask('Why does my espresso taste sour?')?.articleId, 'a01');
  t.equal(ask('Is cold brew stronger than hot coffee?')?.articleId, 'a04');
  t.equal(ask('Should you freeze coffee beans?')?.articleId, 'a07');
  t.notOk(proposals.some((p) => p.question === 'Start with the grind?' || p.question.startsWith('Start with')), 'a heading that is no question');
  const versus = proposals.filter((p) => p.question.includes(' vs '));
  t.same(
    versus.map((p) => [p.question, p.articleId]),
    [['French press vs pour over coffee: which should I choose?', 'a11']],
    '"between a French press and pour over coffee"; "a French press or cold brew" lists, it does not compare',
  );
  t.match(versus[0]?.rationale, /"AeroPress Recipes for One Cup" compares French press and pour over coffee: "It sits somewhere between/);
});

t.test('no question twice; the cap holds', async (t) => {
  const qs = proposals.map((p) => p.question.toLowerCase());
  t.equal(new Set(qs).size, qs.length);
  t.equal(proposeAiPrompts(ARTICLES, { seedKeywords: [], maxQuestions: 4 }).length, 4);
  const withDuplicateSeed = proposeAiPrompts(ARTICLES, { seedKeywords: ['burr grinder', 'Burr Grinder '], maxQuestions: 50 });
  t.equal(withDuplicateSeed.filter((p) => p.question === 'What is the best burr grinder?').length, 1);
});

t.test('question wording and answers, case by case', async (t) => {
  t.equal(questionFromTitle('Chemex vs V60'), 'Chemex or V60: which is better?');
  t.equal(questionFromTitle('Why Is My Crema Thin?'), 'Why Is My Crema Thin?');
  t.equal(questionFromTitle('Making Iced Latte'), 'How do I make iced latte?');
  t.equal(questionFromTitle('Cleaning a Grinder'), 'How do I clean a grinder?');
  t.equal(questionFromTitle('Grinder Maintenance Basics'), 'How do I get started with grinder maintenance?');
  t.equal(questionFromTitle('Latte Art'), null, 'a bare topic gives no question of its own');
  t.equal(bestAnswer(ARTICLES, 'roast levels')?.id, 'a08');
  t.equal(bestAnswer(ARTICLES, 'freeze coffee beans')?.id, 'a07', 'through a heading');
  t.equal(bestAnswer(ARTICLES, 'moka pot'), null);
});
