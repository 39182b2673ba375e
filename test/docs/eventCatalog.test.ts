import { readFileSync } from 'node:fs';
import t from 'tap';
import { domainEventSchemas } from '../../src/domain/eventSchemas.ts';

/** docs/events.md lists every event type the code can store, and no type that does not exist. */
t.test('docs/events.md names every stored event type, and only those', async (t) => {
  const doc = readFileSync(new URL('../../docs/events.md', import.meta.url), 'utf8');
  const table = doc.slice(doc.indexOf('| Stream |'));
  const listed = new Set([...table.matchAll(/`([A-Z][A-Za-z]+)`/g)].map((m) => m[1]!));
  const stored = Object.keys(domainEventSchemas);
  t.same(stored.filter((type) => !listed.has(type)), [], 'every type of eventSchemas.ts is listed');
  t.same([...listed].filter((type) => !stored.includes(type)), [], 'every listed type exists');
});
