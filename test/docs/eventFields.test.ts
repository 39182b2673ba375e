import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { z } from 'zod';
import { EVENT_TYPES, eventDataSchema, eventFieldsMarkdown } from '../../src/cli/eventSchemas.ts';
import { domainEventSchemas } from '../../src/domain/eventSchemas.ts';
import { outreach } from '../helpers/cli.ts';

t.test('docs/eventFields.md is what `outreach events schema --markdown` prints today', async (t) => {
  const doc = readFileSync(new URL('../../docs/eventFields.md', import.meta.url), 'utf8');
  t.equal(doc, eventFieldsMarkdown(), 'regenerate: npx outreach events schema --markdown > docs/eventFields.md');
  t.equal((doc.match(/^\| `[A-Z]/gm) ?? []).length, Object.keys(domainEventSchemas).length, 'a row per stored event type');
});

t.test("a type's JSON Schema names its zod schema's fields and the ones it requires (one sample)", async (t) => {
  // One sample: the fields of a real SiteCreated.
  const schema = eventDataSchema('SiteCreated') as { required: string[]; properties: Record<string, unknown> };
  const zodShape = (domainEventSchemas.SiteCreated as unknown as z.ZodObject).shape;
  t.same(Object.keys(schema.properties).sort(), Object.keys(zodShape).sort(), 'every field');
  t.ok(schema.required.includes('siteId'));
  t.equal(eventDataSchema('NoSuchEvent'), null);
});

t.test('the CLI prints every schema as JSON lines, one type, or refuses an unknown one; it opens no store', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'event-schema-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const env = { DATA_DIR: join(dir, 'data') };
  const all = await outreach(['events', 'schema'], env);
  t.equal(all.code, 0, all.stderr);
  const lines = all.lines<{ type: string; data: { type: string } }>();
  t.same(lines.map((l) => l.type), EVENT_TYPES);
  t.ok(lines.every((l) => l.data.type === 'object'));
  const one = await outreach(['events', 'schema', 'ConversationStatusChanged'], env);
  t.same(one.lines().map((l) => l['type']), ['ConversationStatusChanged']);
  const unknown = await outreach(['events', 'schema', 'Nope'], env);
  t.equal(unknown.code, 1);
  t.match(unknown.stderr, /no event type "Nope"/);
  t.equal(unknown.stdout, '');
  for (const args of [['Nope', '--markdown'], ['SiteCreated', '--markdown']]) {
    const mixed = await outreach(['events', 'schema', ...args], env);
    t.equal(mixed.code, 1, `${args.join(' ')}: refused (from an audit: it printed the whole table)`);
    t.match(mixed.stderr, /--markdown prints every type: give no type with it/);
    t.equal(mixed.stdout, '');
  }
  t.same(readdirSync(dir), [], 'no DATA_DIR was created');
});
