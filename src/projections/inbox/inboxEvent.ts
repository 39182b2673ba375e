import type { ConversationEvent } from '../../domain/conversation.ts';
import { type EventSchemas, conversationEventSchemas, ingestionEventSchemas } from '../../domain/eventSchemas.ts';
import type { IngestionEvent } from '../../domain/ingestion.ts';

/** What the inbox read models are built from: ingestion's facts and each conversation's life after it. */
export type InboxEvent = IngestionEvent | ConversationEvent;
export const inboxEventSchemas: EventSchemas<InboxEvent> = { ...ingestionEventSchemas, ...conversationEventSchemas };

export const iso = (ms: number) => new Date(ms).toISOString();
