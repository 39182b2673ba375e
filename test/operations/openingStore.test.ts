import t from 'tap';
import { StartupError, openingStore } from '../../src/lifecycle/startupFailure.ts';

// A store's client may echo its connection string in an error: the password never reaches the line printed.
const failing = (message: string) => async () => {
  throw new Error(message);
};

t.test('the password is cut from the message, as written, decoded or encoded again', async (t) => {
  const url = 'mongodb://reader:p%21ss%40word@db.example.com:27017/?replicaSet=rs0';
  for (const echoed of ['p%21ss%40word', 'p!ss@word']) {
    const error = await openingStore('MONGODB_URL', url, failing(`cannot connect to reader:${echoed}@db.example.com\nsecond line`)).catch((e: unknown) => e);
    t.ok(error instanceof StartupError);
    t.equal((error as Error).message, 'MONGODB_URL: cannot open the store it names: cannot connect to reader:***@db.example.com', `${echoed}: cut, one line`);
  }
});

t.test('a fragment too short to be a password is left alone; a StartupError passes as it is', async (t) => {
  const error = await openingStore('EVENTSTORE_URL', 'esdb://a:b@host:2113?tls=false', failing('bad host b')).catch((e: unknown) => e);
  t.equal((error as Error).message, 'EVENTSTORE_URL: cannot open the store it names: bad host b');
  const own = new StartupError('already one line');
  t.equal(await openingStore('EVENTSTORE_URL', 'esdb://host', async () => Promise.reject(own)).catch((e: unknown) => e), own);
  t.equal(await openingStore('EVENTSTORE_URL', 'esdb://host', async () => 42), 42);
});
