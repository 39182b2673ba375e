import type { ConversationCommand, ReplyDraft } from '../domain/conversation.ts';
import { type Mailer, MailSendError } from '../ports/mailer.ts';

/** What a send attempt records (`RecordSendResult`). */
export type ReplySendResult = Extract<ConversationCommand, { type: 'RecordSendResult' }>['data']['result'];

/**
 * Sends a claimed reply's draft through the mail port. A failure becomes the result to record: a
 * permanent refusal never retries; a temporary one retries at the time the caller's policy gives
 * (`retryAt`, null when no attempt is left).
 */
export async function sendDraft(mailer: Mailer, draft: ReplyDraft, retryAt: () => number | null): Promise<ReplySendResult> {
  try {
    const sent = await mailer.send({
      messageId: draft.rfcMessageId,
      from: draft.from,
      to: draft.to,
      subject: draft.subject,
      text: draft.bodyText,
      inReplyTo: draft.inReplyTo,
      references: draft.references,
      returnPath: draft.returnPath,
    });
    return { ok: true, mailProviderMessageId: sent.mailProviderMessageId };
  } catch (error) {
    const permanent = error instanceof MailSendError && error.permanent;
    return { ok: false, error: error instanceof Error ? error.message.slice(0, 500) : String(error), permanent, retryAt: permanent ? null : retryAt() };
  }
}
