import type Database from 'better-sqlite3';
import type { AppendResult, ExpectedRevision } from '../../ports/eventStore.ts';

export interface AppendOp {
  kind: 'append';
  streamId: string;
  expected: ExpectedRevision;
  /** [type, data JSON, metadata JSON] per event. */
  events: Array<[string, string, string]>;
  now: bigint;
}
export type WriteOp = AppendOp | { kind: 'delete'; streamId: string };
export type OpResult = { ok: AppendResult | null } | { conflict: bigint | 'no_stream' } | { error: { message: string; code?: string } };

export function createCommitter(db: Database.Database): (ops: WriteOp[]) => OpResult[];
export function openWriter(file: string): { commitOps(ops: WriteOp[]): OpResult[]; close(): void };
