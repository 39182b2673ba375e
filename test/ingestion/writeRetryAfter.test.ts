import t from 'tap';
import { writeRetryAfterMs } from '../../src/http/writeRateLimit.ts';

t.test('sliding write window: the previous minute counts by the share of it still inside the last 60 s', async (t) => {
  t.equal(writeRetryAfterMs({ limit: 60, previous: 60, count: 1, elapsedMs: 30_000 }), 0, '30 + 1 ≤ 60');
  t.equal(writeRetryAfterMs({ limit: 60, previous: 60, count: 31, elapsedMs: 30_000 }), 1_000, '30 + 31 > 60: one second later 29 + 31 = 60');
  t.equal(writeRetryAfterMs({ limit: 60, previous: 60, count: 1, elapsedMs: 0 }), 1_000, 'at the boundary a full previous minute still counts');
  t.equal(writeRetryAfterMs({ limit: 60, previous: 0, count: 60, elapsedMs: 59_999 }), 0, 'the 60th write of a minute is admitted');
  t.equal(writeRetryAfterMs({ limit: 60, previous: 0, count: 61, elapsedMs: 0 }), 61_000, 'the 61st waits for the next minute and a second of it');
  t.equal(writeRetryAfterMs({ limit: 60, previous: 45, count: 61, elapsedMs: 10_000 }), 51_000, 'this minute alone is over: the previous one no longer matters');
});
