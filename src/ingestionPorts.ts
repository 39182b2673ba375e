import { ensureDataDir } from './lifecycle/dataDir.ts';
import { join } from 'node:path';
import fp from 'fastify-plugin';
import type { Config } from './config.ts';
import type { Clock } from './ports/clock.ts';
import { OfflineExtractor } from './adapters/extractor/offlineExtractor.ts';
import { FallbackExtractor, OpenAiExtractor } from './adapters/extractor/openaiExtractor.ts';
import { SqliteCounterStore } from './adapters/sqlite/sqliteCounterStore.ts';
import type { CounterStore } from './ports/counterStore.ts';
import type { Extractor } from './ports/extractor.ts';
import { openAiModelOf } from './adapters/shared/openAiModel.ts';
import { openingStore } from './lifecycle/startupFailure.ts';

/** Limit counters: MongoDB when MONGODB_URL is set (shared by every API node), else a SQLite file under DATA_DIR. */
export async function openCounterStore(config: Config, clock: Clock): Promise<CounterStore> {
  if (config.MONGODB_URL) {
    const { MongoCounterStore } = await import('./adapters/mongodb/mongoCounterStore.ts');
    const url = config.MONGODB_URL;
    return openingStore('MONGODB_URL', url, () => MongoCounterStore.connect(url, config.MONGODB_DB));
  }
  ensureDataDir(config.DATA_DIR);
  return new SqliteCounterStore(join(config.DATA_DIR, 'counters.sqlite'), () => clock.now().getTime());
}

/**
 * The OpenAI(-compatible) extractor when OPENAI_API_KEY is set, falling back to the offline one on
 * any model failure; the offline extractor alone otherwise.
 */
export function createExtractor(config: Config, onModelError: (error: unknown) => void = () => {}): Extractor {
  const offline = new OfflineExtractor();
  const model = openAiModelOf(config);
  if (!model) return offline;
  return new FallbackExtractor(new OpenAiExtractor(model), offline, onModelError);
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Shared limit counters (write rate tier, daily caps). */
    counters: CounterStore;
    /** The ingestion extractor. */
    extractor: Extractor;
  }
}

/** Decorates the app with the ports only ingestion and the write rate tier use (opened by `createServices`, read through). */
export const ingestionPortsPlugin = fp(
  async (fastify, { services }: { services: { counters: CounterStore; extractor: Extractor } }) => {
    fastify.decorate('counters', { getter: () => services.counters });
    fastify.decorate('extractor', { getter: () => services.extractor });
  },
  { name: 'ingestion-ports' },
);
