import { toDomainEvent } from '../lib/parseEvent.ts';
import { SUPPRESSIONS, type SuppressionDoc, suppressionId } from '../readModels/suppressions.ts';
import { type Projection, handles } from './projection.ts';

/** The team-wide suppression list. */
export const suppressionsProjection: Projection = {
  name: 'suppressions',
  version: 1,
  collections: [SUPPRESSIONS],
  canHandle: handles(['ContactSuppressed']),
  async handle(recorded, w) {
    const event = toDomainEvent(recorded);
    if (event?.type !== 'ContactSuppressed') return;
    const { teamId, email, reason, source, occurredAt } = event.data;
    const doc: SuppressionDoc = { id: suppressionId(teamId, email), teamId, email, reason, source, suppressedAt: new Date(occurredAt).toISOString() };
    await w.put(SUPPRESSIONS, doc);
  },
};
