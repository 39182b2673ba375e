import { ensureDataDir } from './lifecycle/dataDir.ts';
import { join } from 'node:path';
import fp from 'fastify-plugin';
import { ulid } from 'ulid';
import type { CommandContext } from './commands/context.ts';
import type { Config } from './config.ts';
import { AesSecretBox, loadOrCreateKey } from './adapters/crypto/aesSecretBox.ts';
import { SqliteEventStore } from './adapters/sqlite/sqliteEventStore.ts';
import type { MessagePort } from 'node:worker_threads';
import { SqliteReadModelStore } from './adapters/sqlite/sqliteReadModelStore.ts';
import type { Clock } from './ports/clock.ts';
import { systemClock } from './adapters/clock/systemClock.ts';
import type { EventStore } from './ports/eventStore.ts';
import type { ReadModelStore } from './ports/readModelStore.ts';
import type { SecretBox } from './ports/secretBox.ts';
import type { ThreadIndex } from './ports/threadIndex.ts';
import { allProjections } from './projections/index.ts';
import { CREDENTIAL_MARK, credentialEventTypes } from './projections/credentialProjections.ts';
import { ProjectionRunner } from './projections/projectionRunner.ts';
import type { CounterStore } from './ports/counterStore.ts';
import type { Extractor } from './ports/extractor.ts';
import { createExtractor, openCounterStore } from './ingestionPorts.ts';
import { bufferedRandom } from './adapters/crypto/bufferedRandom.ts';
import { threadIndexOver } from './readModels/messageThreads.ts';
import { READ_MODEL_INDEXES } from './readModels/indexes.ts';
import { READ_MODEL_LOOKUPS } from './readModels/lookups.ts';
import { createMailer } from './adapters/mail/createMailer.ts';
import type { Mailer } from './ports/mailer.ts';
import { type AgentWorkWiring, productAgentWork } from './agentWorkWiring.ts';
import { openingStore } from './lifecycle/startupFailure.ts';

/** Everything a process of the service needs, wired from configuration. */
export interface Services extends CommandContext {
  config: Config;
  readModels: ReadModelStore;
  /** The threading index ingestion looks earlier messages up in. */
  threads: ThreadIndex;
  projections: ProjectionRunner;
  /** Shared limit counters (write rate tier, daily caps). */
  counters: CounterStore;
  /** The ingestion extractor (offline, or OpenAI with offline fallback). */
  extractor: Extractor;
  /** The mail port (SMTP relay or the embedded outbox), one per process: the agent and a person's replies send through it. Opened on first use. */
  readonly mailer: Mailer;
  /** Each agent's work and work-settings schemas (src/agentWorkWiring.ts). */
  agentWork: AgentWorkWiring;
  close(): Promise<void>;
}

export interface ServiceOverrides {
  clock?: Clock;
  onProjectionError?: (error: unknown) => void;
  /** Called when the language-model extractor fails and the offline one is used instead. */
  onExtractorError?: (error: unknown) => void;
  /** The agents' work (tests give their own); the product's by default. */
  agentWork?: AgentWorkWiring;
  /** The embedded event store's appends are committed by this writer thread of the process (`SqliteEventStore.shareWriter`). */
  eventStoreWriter?: MessagePort;
}

/** The embedded event log's file under DATA_DIR. */
export const eventLogFile = (config: Pick<Config, 'DATA_DIR'>) => join(config.DATA_DIR, 'events.sqlite');

export async function openEventStore(config: Config, writer?: MessagePort): Promise<EventStore> {
  if (config.EVENTSTORE_URL) {
    const url = config.EVENTSTORE_URL;
    const { EsdbEventStore } = await import('./adapters/eventstoredb/esdbEventStore.ts');
    return openingStore('EVENTSTORE_URL', url, async () => {
      const store = new EsdbEventStore(url);
      try {
        await store.ping(); // reached now (bounded), not at the first command
      } catch (error) {
        await store.close().catch(() => {});
        throw error;
      }
      return store;
    });
  }
  ensureDataDir(config.DATA_DIR);
  // The credential mark: requests wait only for the credential projections to pass the last credential event.
  const credentialTypes = credentialEventTypes(allProjections);
  return new SqliteEventStore(eventLogFile(config), {
    marks: credentialTypes ? { [CREDENTIAL_MARK]: credentialTypes } : undefined,
    writer,
  });
}

export async function openReadModels(config: Config): Promise<ReadModelStore> {
  if (config.MONGODB_URL) {
    const { MongoReadModelStore } = await import('./adapters/mongodb/mongoReadModelStore.ts');
    const url = config.MONGODB_URL;
    return openingStore('MONGODB_URL', url, () => MongoReadModelStore.connect(url, config.MONGODB_DB, READ_MODEL_INDEXES, READ_MODEL_LOOKUPS));
  }
  ensureDataDir(config.DATA_DIR);
  return new SqliteReadModelStore(join(config.DATA_DIR, 'readmodels.sqlite'), READ_MODEL_INDEXES);
}

export const secretKeyFile = (config: Config) => join(config.DATA_DIR, 'secret.key');

export async function createServices(config: Config, overrides: ServiceOverrides = {}): Promise<Services> {
  // The key first: a bad key file stops the start before any store file is created.
  if (!config.SECRET_KEY) ensureDataDir(config.DATA_DIR);
  const secrets = new AesSecretBox(loadOrCreateKey(config.SECRET_KEY, secretKeyFile(config)));
  const events = await openEventStore(config, overrides.eventStoreWriter);
  const readModels = await openReadModels(config);
  const projections = new ProjectionRunner(events, readModels, allProjections, { onError: overrides.onProjectionError });
  await projections.init();
  const counters = await openCounterStore(config, overrides.clock ?? systemClock);
  const extractor = createExtractor(config, overrides.onExtractorError);
  let mailer: Mailer | null = null;
  return {
    config,
    events,
    readModels,
    threads: threadIndexOver(readModels),
    secrets,
    clock: overrides.clock ?? systemClock,
    // ulid's default PRNG makes one getRandomValues call per character; a buffered CSPRNG is ~10x cheaper.
    newId: () => ulid(undefined, bufferedRandom),
    projections,
    counters,
    extractor,
    agentWork: overrides.agentWork ?? productAgentWork,
    get mailer() {
      mailer ??= createMailer(config, { clock: overrides.clock ?? systemClock });
      return mailer;
    },
    async close() {
      await projections.stop();
      await mailer?.close();
      await counters.close();
      await events.close();
      await readModels.close();
    },
  };
}

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    events: EventStore;
    readModels: ReadModelStore;
    threads: ThreadIndex;
    secrets: SecretBox;
    clock: Clock;
    newId(): string;
    projections: ProjectionRunner;
    mailer: Mailer;
    agentWork: AgentWorkWiring;
  }
}

/**
 * The HTTP composition root's first plugin: decorates the app with the ports `createServices`
 * opened (the caller keeps owning them and closes them). Routes read `app.events`, `app.readModels`
 * and so on, and pass the app itself as the command context. Each decoration reads through to
 * `services`, so the app and the processes sharing that object always see the same ports.
 */
export const servicesPlugin = fp(
  async (fastify, { services }: { services: Services }) => {
    fastify.decorate('config', { getter: () => services.config });
    fastify.decorate('events', { getter: () => services.events });
    fastify.decorate('readModels', { getter: () => services.readModels });
    fastify.decorate('threads', { getter: () => services.threads });
    fastify.decorate('secrets', { getter: () => services.secrets });
    fastify.decorate('clock', { getter: () => services.clock });
    fastify.decorate('newId', () => services.newId());
    fastify.decorate('projections', { getter: () => services.projections });
    fastify.decorate('mailer', { getter: () => services.mailer });
    fastify.decorate('agentWork', { getter: () => services.agentWork });
  },
  { name: 'services' },
);
