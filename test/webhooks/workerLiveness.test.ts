import t from 'tap';
import { tempCounterStore } from '../helpers/tempCounterStore.ts';
import { WorkerLiveness } from '../../src/processors/webhookDelivery/workerLiveness.ts';

t.test("worker liveness: silent after two of the reader's windows without a beat, whatever window the beater uses", async (t) => {
  let now = Date.parse('2026-11-28T10:00:00.000Z');
  const counters = tempCounterStore(t, () => now);
  const clock = () => now;
  const beater = new WorkerLiveness(counters, clock, 30_000);
  const sameSettings = new WorkerLiveness(counters, clock, 30_000);
  const otherSettings = new WorkerLiveness(counters, clock, 25_000);

  t.equal(await sameSettings.isSilent('copy-a'), true, 'never beaten: silent');
  await beater.beat('copy-a');
  t.equal(await sameSettings.isSilent('copy-a'), false, 'just beaten');
  t.equal(await otherSettings.isSilent('copy-a'), false, 'a reader with another WEBHOOK_ORPHAN_AFTER_MS sees the beat too');
  t.equal(await sameSettings.isSilent('copy-b'), true, 'another copy is not this one');
  now += 49_000;
  t.equal(await otherSettings.isSilent('copy-a'), false, '49 s later: within 2 × 25 s');
  now += 2_000;
  t.equal(await otherSettings.isSilent('copy-a'), true, '51 s later: silent to the reader with 25 s windows');
  t.equal(await sameSettings.isSilent('copy-a'), false, 'not yet to the one with 30 s windows');
  now += 10_000;
  t.equal(await sameSettings.isSilent('copy-a'), true, '61 s later: silent to both');
});

t.test("worker liveness: a beat stamped by a clock ahead of the reader's counts", async (t) => {
  const base = Date.parse('2026-11-28T10:00:00.000Z');
  const counters = tempCounterStore(t, () => base);
  await new WorkerLiveness(counters, () => base + 20_000, 1_000).beat('ahead');
  t.equal(await new WorkerLiveness(counters, () => base, 1_000).isSilent('ahead'), false);
});
