import t from 'tap';
import { writeRetryAfterMs } from '../../src/http/writeRateLimit.ts';

const at = (second: number, ms = 0) => second * 1000 + ms;

t.test('write window: each second counts until 61 seconds have begun after it', async (t) => {
  t.equal(writeRetryAfterMs({ limit: 60, perSecond: [[10, 60]], nowMs: at(10, 500) }), 0, 'the 60th write is admitted');
  t.equal(writeRetryAfterMs({ limit: 60, perSecond: [[10, 61]], nowMs: at(10, 500) }), 60_500, 'the 61st waits until second 71 begins');
  t.equal(writeRetryAfterMs({ limit: 60, perSecond: [[10, 30], [40, 31]], nowMs: at(50) }), 21_000, 'only as long as the oldest second needs to leave');
  t.equal(writeRetryAfterMs({ limit: 60, perSecond: [[10, 1], [11, 1], [40, 60]], nowMs: at(50) }), 22_000, 'several old seconds: until enough have left');
  t.equal(writeRetryAfterMs({ limit: 60, perSecond: [[10, 60], [70, 1]], nowMs: at(70, 999) }), 1, 'the last millisecond before it leaves');
  t.equal(writeRetryAfterMs({ limit: 3, perSecond: [[5, 2], [6, 2]], nowMs: at(6, 250) }), 59_750, 'Retry-After is whole: never 0 ms');
  t.equal(writeRetryAfterMs({ limit: 60, perSecond: [], nowMs: at(1) }), 0, 'nothing counted');
});
