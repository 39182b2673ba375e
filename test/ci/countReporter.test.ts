// The CI reads the reporter's last line; the lines before it name what failed, so a log's tail
// says which tests to look at.
import t from 'tap';
import { fileURLToPath } from 'node:url';
import type { Duplex } from 'node:stream';

const modulePath = fileURLToPath(new URL('../../scripts/countReporter.mjs', import.meta.url));

async function report(tap: string): Promise<string[]> {
  const { default: CountReporter } = (await import(modulePath)) as { default: new () => Duplex };
  const reporter = new CountReporter();
  let out = '';
  reporter.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const ended = new Promise((resolve) => reporter.on('end', resolve));
  reporter.end(tap);
  await ended;
  return out.trimEnd().split('\n');
}

t.test('a failed assertion is counted and named by its full path, just before the last line', async (t) => {
  const lines = await report(
    [
      'TAP version 14',
      '# Subtest: test/a.test.ts',
      '    # Subtest: outer',
      '        ok 1 - fine',
      '        not ok 2 - one is two',
      '        1..2',
      '    not ok 1 - outer',
      '    1..1',
      'not ok 1 - test/a.test.ts',
      '# Subtest: test/b.test.ts',
      '    ok 1 - fine too',
      '    1..1',
      'ok 2 - test/b.test.ts',
      '1..2',
      '',
    ].join('\n'),
  );
  t.equal(lines.at(-1), '2 passed, 1 failed');
  const listed = lines.indexOf('# failed (1):');
  t.ok(listed > 0, 'a list of failures');
  t.equal(lines[listed + 1], '#   test/a.test.ts > outer > one is two');
});

t.test('a subtest that fails with no failed assertion (a crash) is named', async (t) => {
  const lines = await report(
    ['TAP version 14', '# Subtest: test/c.test.ts', '    ok 1 - fine', '    1..2', 'not ok 1 - test/c.test.ts', '1..1', ''].join('\n'),
  );
  t.equal(lines.at(-1), '1 passed, 1 failed');
  t.ok(lines.includes('#   test/c.test.ts'), 'the crashed file is named');
});

t.test('a green run lists nothing', async (t) => {
  const lines = await report(['TAP version 14', 'ok 1 - fine', '1..1', ''].join('\n'));
  t.equal(lines.at(-1), '1 passed, 0 failed');
  t.notOk(lines.some((line) => line.startsWith('# failed')));
});
