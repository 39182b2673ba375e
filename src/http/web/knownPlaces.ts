import type { Clock } from '../../ports/clock.ts';
import type { CounterStore } from '../../ports/counterStore.ts';
import { counterKey } from './signInThrottle.ts';

const REMEMBERED_MS = 90 * 24 * 3600_000;

/**
 * Where an account signs in from (its client groups, for 90 days after the last sign-in or mailed
 * sign-in link there): the per-account limit of failed sign-ins does not count or refuse attempts
 * from these, so failures anyone sends from elsewhere cannot lock the account's person out of them.
 * Kept in the shared counter store, so every process of the service knows them.
 */
export class KnownPlaces {
  constructor(
    private readonly counters: CounterStore,
    private readonly clock: Clock,
  ) {}

  private key(email: string, client: string) {
    return counterKey('signin-known', `${email}|${client}`);
  }

  private until() {
    return new Date(this.clock.now().getTime() + REMEMBERED_MS);
  }

  async has(email: string, client: string): Promise<boolean> {
    // A counter's expiry only ever grows (both stores keep the later one): asking with a minute's
    // neither stretches a known place's 90 days nor keeps a row of every place anyone tried for long.
    return (await this.counters.increment(this.key(email, client), 0, new Date(this.clock.now().getTime() + 60_000))) > 0;
  }

  async remember(email: string, client: string): Promise<void> {
    await this.counters.increment(this.key(email, client), 1, this.until());
  }
}
