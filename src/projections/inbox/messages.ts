import { normaliseMessageId } from '../../domain/ingestion.ts';
import type { ProjectionWriter } from '../../ports/readModelStore.ts';
import { MESSAGES, type MessageDoc } from '../../readModels/messages.ts';
import { type InboxEvent, iso } from './inboxEvent.ts';

/** Messages: each ingested inbound one, and each outbound reply with its delivery status. */
export async function applyToMessages(event: InboxEvent, w: ProjectionWriter): Promise<void> {
  switch (event.type) {
    case 'MessageIngested': {
      const d = event.data;
      const message: MessageDoc = {
        id: d.messageId,
        siteId: d.siteId,
        teamId: d.teamId,
        conversationIds: d.conversationIds,
        direction: d.direction,
        senderType: d.senderType,
        from: d.from,
        fromName: d.fromName,
        subject: d.subject,
        bodyText: d.bodyText,
        bodyHtml: d.bodyHtml,
        externalMessageId: d.externalMessageId,
        inReplyTo: d.inReplyTo,
        references: d.references,
        channel: d.channel,
        receivedAt: iso(d.occurredAt),
      };
      return w.put(MESSAGES, message);
    }
    case 'ReplyDrafted': {
      const r = event.data;
      const message: MessageDoc = {
        id: r.messageId,
        siteId: r.siteId,
        teamId: r.teamId,
        conversationIds: [r.conversationId],
        direction: 'outbound',
        senderType: r.senderType,
        from: r.from.address,
        fromName: r.from.name,
        to: r.to.address,
        subject: r.subject,
        bodyText: r.bodyText,
        bodyHtml: null,
        externalMessageId: normaliseMessageId(r.rfcMessageId),
        inReplyTo: r.inReplyTo,
        references: r.references.join(' ') || null,
        channel: 'smtp',
        receivedAt: iso(r.occurredAt),
        deliveryStatus: 'sending',
        mailProviderMessageId: null,
        sentAt: null,
        lastError: null,
      };
      return w.put(MESSAGES, message);
    }
    case 'ReplySent':
    case 'ReplySendFailed': {
      const message = await w.get<MessageDoc>(MESSAGES, event.data.messageId);
      if (!message) return;
      if (event.type === 'ReplySent') {
        return w.put(MESSAGES, { ...message, deliveryStatus: 'sent', mailProviderMessageId: event.data.mailProviderMessageId, sentAt: iso(event.data.occurredAt), lastError: null });
      }
      return w.put(MESSAGES, { ...message, deliveryStatus: event.data.retryAt === null ? 'failed' : 'retrying', lastError: event.data.error });
    }
    default:
      return;
  }
}
