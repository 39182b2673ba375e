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
    subject: foldableSubject(mail.subject),
    text: mail.text,
    ...(mail.inReplyTo ? { inReplyTo: mail.inReplyTo } : {}),
    ...(mail.references.length > 0 ? { references: mail.references } : {}),
    envelope: { from: mail.returnPath ?? mail.from.address, to: [mail.to.address] },
    disableFileAccess: true,
    disableUrlAccess: true,
  };
}

/**
 * nodemailer folds a header only at white space, so an unbroken run of ~990 characters (a subject a
 * person may type, up to 998) would make a line longer than RFC 5322's 998. Such a subject goes as
 * RFC 2047 encoded-words (base64, at most 45 bytes each, never splitting a character), which fold
 * between words and read back as the same text.
 */
export function foldableSubject(subject: string): string {
  if (!/\S{900}/.test(subject)) return subject;
  const words: string[] = [];
  let chunk = '';
  for (const ch of subject) {
    if (Buffer.byteLength(chunk + ch) > 45) {
      words.push(chunk);
      chunk = '';
    }
    chunk += ch;
  }
  if (chunk) words.push(chunk);
  return words.map((w) => `=?UTF-8?B?${Buffer.from(w, 'utf8').toString('base64')}?=`).join(' ');
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
