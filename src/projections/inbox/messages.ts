import { normaliseMessageId } from '../../domain/ingestion.ts';
import type { ProjectionWriter } from '../../ports/readModelStore.ts';
import { CONVERSATION_MESSAGES, type ConversationMessageDoc, MESSAGES, type MessageDoc, conversationMessageId } from '../../readModels/messages.ts';
import { type InboxEvent, iso } from './inboxEvent.ts';

/** The message's place in each of its conversations. */
async function link(w: ProjectionWriter, message: MessageDoc): Promise<void> {
  for (const conversationId of message.conversationIds) {
    const doc: ConversationMessageDoc = {
      id: conversationMessageId(conversationId, message.id),
      conversationId,
      messageId: message.id,
      siteId: message.siteId,
      receivedAt: message.receivedAt,
    };
    await w.put(CONVERSATION_MESSAGES, doc);
  }
}

/** Messages: each ingested inbound one, and each outbound reply with its delivery status; each linked to its conversations. */
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
        ...(d.forwarded ? { forwarded: true } : {}),
        channel: d.channel,
        receivedAt: iso(d.occurredAt),
      };
      await w.put(MESSAGES, message);
      return link(w, message);
    }
    case 'ReplyDrafted': {
      const r = event.data;
      const message: MessageDoc = {
        id: r.messageId,
        siteId: r.siteId,
        teamId: r.teamId,
        // A reply that answers a pitch's other asks too is in each of their conversations.
        conversationIds: [r.conversationId, ...(r.answersFor ?? [])],
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
      await w.put(MESSAGES, message);
      return link(w, message);
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
