import t from 'tap';
import { workSettingsSchemas } from '../../src/agentWork/settings.ts';
import { DEFAULT_AGENT_SETTINGS } from '../../src/domain/agents.ts';
import { parseAgentUpdate, workSettingsOf } from '../../src/domain/agentSettingsSchemas.ts';

t.test('seed keywords are one line of text each; a stored one that is not gives way to the default', async (t) => {
  for (const key of ['article_creation', 'ai_prompt'] as const) {
    for (const keyword of ['x\u0000y', 'x\ud800y', 'two\nlines', 'next\u0085line', 'x\u007fy', 'x\u009by']) {
      t.throws(() => parseAgentUpdate(key, { settings: { seedKeywords: [keyword] } }, DEFAULT_AGENT_SETTINGS, workSettingsSchemas), { code: 'VALIDATION_ERROR', message: /seedKeywords\.0: must be one line of text/ }, `${key}: ${JSON.stringify(keyword)}`);
    }
    t.same(parseAgentUpdate(key, { settings: { seedKeywords: [' compost bins '] } }, DEFAULT_AGENT_SETTINGS, workSettingsSchemas).workSettings, { seedKeywords: ['compost bins'] });
    // Stored before the rule: the run reads the default instead of failing.
    const stored = { ...DEFAULT_AGENT_SETTINGS, workSettings: { seedKeywords: ['x\u0000y'] } };
    t.same(workSettingsOf(key, stored, workSettingsSchemas).seedKeywords, [], `${key}: a stored keyword with NUL`);
  }
});
