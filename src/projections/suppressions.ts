import { toDomainEvent } from '../lib/parseEvent.ts';
import { SUPPRESSIONS, type SuppressionDoc, suppressionId } from '../readModels/suppressions.ts';
import { type Projection, handles } from './projection.ts';

/** The team-wide suppression list. */
export const suppressionsProjection: Projection = {
  name: 'suppressions',
  version: 1,
  collections: [SUPPRESSIONS],
  canHandle: handles(['ContactSuppressed', 'ContactUnsuppressed']),
  async handle(recorded, w) {
    const event = toDomainEvent(recorded);
    // Removal drops the document; the stream keeps the history.
    if (event?.type === 'ContactUnsuppressed') return w.remove(SUPPRESSIONS, suppressionId(event.data.teamId, event.data.email));
    if (event?.type !== 'ContactSuppressed') return;
    const { teamId, email, reason, source, occurredAt } = event.data;
    const doc: SuppressionDoc = { id: suppressionId(teamId, email), teamId, email, reason, source, suppressedAt: new Date(occurredAt).toISOString() };
    await w.put(SUPPRESSIONS, doc);
  },
};
