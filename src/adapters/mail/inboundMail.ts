import { domainToASCII } from 'node:url';
import { type ParsedMail, simpleParser } from 'mailparser';
import { headersAsUtf8 } from './eightBitHeaders.ts';
import { htmlToText } from '../../domain/articleText.ts';
import { originalSender } from '../../domain/forwarded.ts';
import { type InboundMessage, MESSAGE_ID_SHAPE } from '../../domain/ingestion.ts';
import { returnedReplyIds } from '../../domain/outreachAgent.ts';
import { isEmailAddress } from '../../domain/email.ts';
import { cleanedText, truncateText } from '../../domain/text.ts';
import { type DeliveryReport, classifyDeliveryReport } from './deliveryReport.ts';

/**
 * mailparser's own HTML-to-text conversion grows faster than its input (seconds for a megabyte): the
 * text of an HTML-only mail is derived by one linear pass instead. `ignoreEmbedded` (mailsplit's,
 * passed through): a `message/rfc822` part is an attachment whatever its disposition, not text run
 * into the mail's own with a header table and no forward marker (`attachedForward` reads it).
 */
const PARSE = { skipHtmlToText: true, skipTextToHtml: true, skipTextLinks: true, skipImageLinks: true, ignoreEmbedded: true } as const;

/**
 * A mail as the forwarding mailbox ingests it (IngestMessage's message), its fields made storable,
 * nothing looked up. `from`/`fromName`: the header From (null without one); `forwardedFrom`: the
 * forwarded block's `From:` if the body has one, the sender when a member of the site's team forwarded
 * the mail (the mailbox decides, `pitchSender`). `retryStable`: what a sending server's retry sends
 * again unchanged (the Date, From and Subject header lines, the bodies as parsed), the idempotency key
 * of a mail without a Message-Id.
 */
export type ReceivedMessage = Omit<InboundMessage, 'from' | 'forwarded'> & {
  from: string | null;
  forwardedFrom: { address: string; name: string | null } | null;
  retryStable: string[];
};

export type InboundMail =
  | { kind: 'report'; report: DeliveryReport; returnedReplyIds: string[] }
  | { kind: 'message'; message: ReceivedMessage }
  /** Neither (asked for reports only: mail to a bounce address that is not a report). */
  | { kind: 'other' };

/**
 * Reads a received mail: a delivery report (a bounce or a complaint, with the ids of our mails it
 * returns), else the message to ingest. `reportsOnly` stops after the first (mail sent to bounce
 * addresses only is never ingested). Pure: the forwarding mailbox runs it in a worker thread with a
 * time budget, since the parsers' cost can grow faster than their input.
 */
export async function readInboundMail(raw: Uint8Array, reportsOnly: boolean): Promise<InboundMail> {
  const buffer = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  const report = await classifyDeliveryReport(buffer);
  if (report) return { kind: 'report', report, returnedReplyIds: returnedReplyIds(buffer.toString('latin1')) };
  if (reportsOnly) return { kind: 'other' };
  const mail = await simpleParser(headersAsUtf8(buffer), PARSE);
  const html = typeof mail.html === 'string' ? mail.html : null;
  const attached = await attachedForward(mail);
  const own = textOf(mail);
  const text = own + (attached?.block ?? '');
  const headerFrom = mail.from?.value[0];
  // An attached pitch's sender is its parsed From, never read back from text: a name or subject
  // holding a line separator wrote a From line of its author's choosing. When the forwarder's own
  // text holds an inline forward too and they name different senders, neither is taken: a stranger's
  // pitch forwarded inline may carry an attached mail "from" anyone.
  const inline = originalSender(own);
  const fromAttached = attached?.sender ?? null;
  const forwarded = inline && fromAttached && inline.address !== fromAttached.address ? null : (inline ?? fromAttached);
  return {
    kind: 'message',
    message: {
      from: asciiDomain(headerFrom?.address ?? null),
      // A mail from anyone is taken as it comes, made storable and mailable (the API refuses such text instead).
      fromName: cleanedNullable(headerFrom?.name || null, 500),
      forwardedFrom: forwarded && { address: asciiDomain(forwarded.address)!, name: cleanedNullable(forwarded.name, 500) },
      subject: truncateText(cleanedText(mail.subject ?? ''), 2_000),
      bodyText: cleanedText(text),
      bodyHtml: cleanedNullable(html),
      // A Message-Id as mail headers carry one, else none: `<>` or an 8-bit id would merge different
      // mails under one idempotency key (the content key tells them apart).
      messageId: headerMessageId(mail.messageId),
      inReplyTo: threadHeader(mail.inReplyTo),
      references: threadHeader(mail.references),
      retryStable: [headerLine(mail, 'date'), headerLine(mail, 'from'), headerLine(mail, 'subject'), (mail.text ?? '') + (attached?.block ?? ''), html ?? ''],
    },
  };
}

/** The mail's text; an HTML-only mail's text part is '' here (the conversion skipped): derived from its HTML. */
function textOf(mail: ParsedMail): string {
  const html = typeof mail.html === 'string' ? mail.html : null;
  return !mail.text?.trim() && html ? htmlToText(html, { mail: true }) : (mail.text ?? '');
}

/**
 * A pitch forwarded as an attachment ("Forward as attachment" in Gmail, Outlook, Thunderbird: a
 * `message/rfc822` part; the pitch's sender was lost, and the forwarder taken for it): its sender as
 * parsed (`pitchSender` decides whether it names the prospect: only a team member's forward does),
 * and its text written out after the mail's own as an inline forward's block ("---------- Forwarded
 * message ---------", From, Date, Subject, To, then its text) for the agent and the extractor to
 * read. The first such attachment; null without one.
 */
async function attachedForward(mail: ParsedMail): Promise<{ sender: { address: string; name: string | null } | null; block: string } | null> {
  const attached = mail.attachments.find((a) => a.contentType.toLowerCase() === 'message/rfc822');
  if (!attached) return null;
  const inner = await simpleParser(headersAsUtf8(attached.content), PARSE);
  const from = inner.from?.value[0];
  // A From that is no address (`"Jane" <not-an-address>`) names no one: the forwarder stays the sender.
  const address = from?.address?.toLowerCase();
  const sender = address && isEmailAddress(asciiDomain(address)!) ? { address, name: from!.name || null } : null;
  const lines = [
    '---------- Forwarded message ---------',
    `From: ${sender ? `${sender.name ? `${oneLine(sender.name).replace(/[<>"]/g, ' ').trim()} ` : ''}<${oneLine(sender.address)}>` : '(none)'}`,
    inner.date ? `Date: ${inner.date.toUTCString()}` : null,
    `Subject: ${oneLine(inner.subject ?? '')}`,
    inner.to ? `To: ${oneLine([inner.to].flat().map((a) => a.text).join(', '))}` : null,
  ].filter((l) => l !== null);
  return { sender, block: `\n\n${lines.join('\n')}\n\n${textOf(inner)}` };
}

/** Every line break JavaScript's `^`/`$` know (CR, LF, NEL, U+2028, U+2029) made a space. */
const oneLine = (s: string) => s.replace(/[\r\n\u0085\u2028\u2029]+/g, ' ');

/**
 * An address with its domain as DNS has it (`jorg@xn--exmple-cua.de`): mailparser gives an
 * internationalised domain in Unicode (`jorg@exämple.de`, whichever way it was sent), which the
 * address rule (ASCII, as REST takes it) refused for good with 550. A domain that is no IDN stays as it is.
 */
const asciiDomain = (address: string | null): string | null => {
  if (address === null) return null;
  const at = address.lastIndexOf('@');
  if (at < 0 || /^[\x00-\x7f]*$/.test(address.slice(at + 1))) return address;
  return `${address.slice(0, at)}@${domainToASCII(address.slice(at + 1)) || address.slice(at + 1)}`;
};

const headerLine = (mail: ParsedMail, name: string) => mail.headerLines.find((h) => h.key === name)?.line ?? '';

/**
 * The Message-Id header's id when it is one (`left@right`, UTF-8 allowed as REST allows it), trimmed;
 * null otherwise: `<>`, or bytes that were not UTF-8 (decoded to U+FFFD), would merge different mails
 * under one idempotency key. (mailparser gives `false` for an empty header.)
 */
const headerMessageId = (id: unknown): string | null => {
  const trimmed = typeof id === 'string' ? id.trim() : '';
  return trimmed && MESSAGE_ID_SHAPE.test(trimmed) && !trimmed.includes('\uFFFD') ? trimmed : null;
};

/** In-Reply-To and References as the header gave them (strings only; mailparser gives `false` for an empty one), made storable: the thread lookup parses the ids out of them. */
const threadHeader = (value: unknown): string | null => {
  const text = Array.isArray(value) ? value.filter((v) => typeof v === 'string').join(' ') : typeof value === 'string' ? value : '';
  return text.trim() ? cleanedText(text) : null;
};

/** At most `max` UTF-16 units, as the REST body allows (`truncateText`). */
const cleanedNullable = (v: string | null, max = Infinity) => (v === null ? null : truncateText(cleanedText(v), max));
