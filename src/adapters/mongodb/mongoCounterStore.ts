import { type Collection, MongoClient } from 'mongodb';
import type { CounterStore } from '../../ports/counterStore.ts';
import './unavailable.ts';

interface CounterDoc {
  _id: string;
  count: number;
  expiresAt: Date;
}

/**
 * Counters in MongoDB: `findOneAndUpdate` with `$inc` and upsert is atomic per document, so every
 * API node sees one count. A TTL index removes counters after their window.
 */
export class MongoCounterStore implements CounterStore {
  private constructor(
    private readonly client: MongoClient,
    private readonly counters: Collection<CounterDoc>,
  ) {}

  static async connect(url: string, dbName: string): Promise<MongoCounterStore> {
    const client = await MongoClient.connect(url);
    const counters = client.db(dbName).collection<CounterDoc>('counters');
    await counters.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 60 });
    return new MongoCounterStore(client, counters);
  }

  async increment(key: string, by: number, expiresAt: Date): Promise<number> {
    for (let attempt = 0; ; attempt++) {
      try {
        const doc = await this.counters.findOneAndUpdate(
          { _id: key },
          { $inc: { count: by }, $max: { expiresAt } },
          { upsert: true, returnDocument: 'after' },
        );
        return doc!.count;
      } catch (error) {
        // Two upserts of a new key can race on the unique _id; the loser retries as an update.
        if ((error as { code?: number }).code === 11000 && attempt < 3) continue;
        throw error;
      }
    }
  }

  async range(from: string, to: string): Promise<Array<{ key: string; count: number }>> {
    // Strings compare by their UTF-8 bytes under the collection's default (simple) collation.
    const docs = await this.counters.find({ _id: { $gte: from, $lte: to } }, { sort: { _id: 1 }, projection: { count: 1 } }).toArray();
    return docs.map((doc) => ({ key: doc._id, count: doc.count }));
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}
