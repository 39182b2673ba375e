import type { Address, SendMailOptions } from 'nodemailer';
import { MAIL_MESSAGE_ID_SHAPE } from '../../domain/ingestion.ts';
import { MailSendError, type MailAddress, type OutgoingMail } from '../../ports/mailer.ts';


/**
 * The nodemailer message both adapters build from one reply, so the outbox stores the bytes SMTP
 * would send. Our Message-Id, In-Reply-To and References are set as given; nothing is read from
 * files or URLs.
 */
export function mailOptions(mail: OutgoingMail): SendMailOptions {
  checkIds(mail);
  return {
    messageId: mail.messageId,
    from: address(mail.from),
    to: address(mail.to),
    ...(mail.replyTo ? { replyTo: address(mail.replyTo) } : {}),
    subject: mail.subject,
    text: mail.text,
    ...(mail.inReplyTo ? { inReplyTo: mail.inReplyTo } : {}),
    ...(mail.references.length > 0 ? { references: mail.references } : {}),
    envelope: { from: mail.returnPath ?? mail.from.address, to: [mail.to.address] },
    disableFileAccess: true,
    disableUrlAccess: true,
  };
}

function address(a: MailAddress): Address | string {
  return a.name ? { name: a.name, address: a.address } : a.address;
}

/**
 * A malformed id is a bug in the caller: sending it again cannot succeed. The rule is
 * MAIL_MESSAGE_ID_SHAPE (printable ASCII, which a reply's threading headers are filtered by), with the brackets required.
 */
function checkIds(mail: OutgoingMail): void {
  const bad = [mail.messageId, ...(mail.inReplyTo ? [mail.inReplyTo] : []), ...mail.references].find((id) => !id.startsWith('<') || !MAIL_MESSAGE_ID_SHAPE.test(id));
  if (bad !== undefined) throw new MailSendError(`not a Message-Id with angle brackets: ${JSON.stringify(bad)}`, true);
}
