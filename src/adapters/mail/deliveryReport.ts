import { type AddressObject, type Attachment, type SimpleParserOptions, simpleParser } from 'mailparser';

/** A recipient a delivery status notification reports as permanently failed. */
export interface BouncedRecipient {
  /** The address as the report gives it (angle brackets removed, not case-folded). */
  email: string;
  /** The RFC 3463 status code, e.g. `5.1.1`. */
  status: string;
  /** The RFC 3464 action, lower-case: always `failed` here. */
  action: string;
}

export type DeliveryReport =
  | { kind: 'bounce'; recipients: BouncedRecipient[] }
  | { kind: 'complaint'; email: string; feedbackType: string };

/**
 * ARF feedback types that mean "the recipient does not want this mail". `not-spam` is the opposite,
 * and `auth-failure` (RFC 6591) reports an authentication failure, not a person's complaint.
 */
export const COMPLAINT_FEEDBACK_TYPES = ['abuse', 'fraud', 'virus', 'other'] as const;

const DELIVERY_STATUS_TYPES = new Set(['message/delivery-status', 'message/global-delivery-status']);
const FEEDBACK_REPORT_TYPE = 'message/feedback-report';
const ORIGINAL_MESSAGE_TYPES = new Set(['message/rfc822', 'text/rfc822-headers', 'message/global', 'message/global-headers']);

const PARSE: SimpleParserOptions & { ignoreEmbedded: boolean } = {
  // The report fields must stay a part of their own, not text.
  keepDeliveryStatus: true,
  // mailparser hands this to its MIME splitter (mailsplit): an inline message/rfc822 part (as ARF
  // reports often send the original) stays one part with its headers, instead of being rendered into the text.
  ignoreEmbedded: true,
  skipHtmlToText: true,
  skipTextToHtml: true,
  skipTextLinks: true,
  skipImageLinks: true,
};

/**
 * Recognises the two machine-readable reports that feed the suppression list: an RFC 3464 delivery
 * status notification with at least one permanent failure (a hard bounce), and an RFC 5965 ARF
 * complaint. Anything else (ordinary mail, a delay notice, a success notice, a report without a
 * usable address) is null. mailparser splits the MIME parts; the report fields are read here.
 */
export async function classifyDeliveryReport(raw: Buffer | string): Promise<DeliveryReport | null> {
  const mail = await simpleParser(raw, PARSE);
  const contentType = mail.headers.get('content-type') as { value?: string } | string | undefined;
  const mediaType = (typeof contentType === 'string' ? contentType : contentType?.value ?? '').toLowerCase();
  if (mediaType !== 'multipart/report') return null;
  const partOf = (types: Set<string>) => mail.attachments.find((a) => types.has(a.contentType.toLowerCase()));

  const deliveryStatus = partOf(DELIVERY_STATUS_TYPES);
  if (deliveryStatus) return bounce(deliveryStatus.content.toString('utf8'));
  const feedback = partOf(new Set([FEEDBACK_REPORT_TYPE]));
  if (feedback) return complaint(feedback.content.toString('utf8'), partOf(ORIGINAL_MESSAGE_TYPES));
  return null;
}

function bounce(report: string): DeliveryReport | null {
  const recipients = new Map<string, BouncedRecipient>();
  // The first block describes the message; each further block one recipient.
  for (const fields of parseFieldBlocks(report)) {
    const email = address(first(fields, 'final-recipient')) ?? address(first(fields, 'original-recipient'));
    if (!email) continue;
    const action = (first(fields, 'action') ?? '').split(/[\s(;]/)[0]!.toLowerCase();
    const status = statusCode(first(fields, 'status')) ?? statusFromDiagnostic(first(fields, 'diagnostic-code'));
    if (action !== 'failed' || !status?.startsWith('5.')) continue;
    if (!recipients.has(email.toLowerCase())) recipients.set(email.toLowerCase(), { email, status, action });
  }
  return recipients.size > 0 ? { kind: 'bounce', recipients: [...recipients.values()] } : null;
}

async function complaint(report: string, original: Attachment | undefined): Promise<DeliveryReport | null> {
  const fields = parseFieldBlocks(report)[0];
  if (!fields) return null;
  const feedbackType = (first(fields, 'feedback-type') ?? '').trim().toLowerCase();
  if (!(COMPLAINT_FEEDBACK_TYPES as readonly string[]).includes(feedbackType)) return null;
  const email = (fields.get('original-rcpt-to') ?? []).map(address).find(Boolean) ?? (original ? await originalRecipient(original) : null);
  return email ? { kind: 'complaint', email, feedbackType } : null;
}

/** The first To address of the reported message (providers that omit Original-Rcpt-To usually keep it; some redact it). */
async function originalRecipient(original: Attachment): Promise<string | null> {
  const message = await simpleParser(original.content, PARSE);
  const to: AddressObject[] = message.to === undefined ? [] : Array.isArray(message.to) ? message.to : [message.to];
  for (const group of to) for (const a of group.value) if (a.address && a.address.includes('@')) return a.address;
  return null;
}

/**
 * Header-style field blocks (RFC 3464 section 2, RFC 5965 section 3): `Name: value` lines, folded
 * lines continued by leading white space, blocks separated by blank lines. Names are lower-cased;
 * a field that repeats keeps every value.
 */
export function parseFieldBlocks(text: string): Map<string, string[]>[] {
  const blocks: Map<string, string[]>[] = [];
  let block = new Map<string, string[]>();
  let last: { name: string; index: number } | null = null;
  for (const line of text.replace(/\r\n?/g, '\n').split('\n')) {
    if (line.trim() === '') {
      if (block.size > 0) blocks.push(block);
      block = new Map();
      last = null;
    } else if (/^[ \t]/.test(line) && last) {
      const values = block.get(last.name)!;
      values[last.index] = `${values[last.index]} ${line.trim()}`;
    } else {
      const colon = line.indexOf(':');
      if (colon <= 0) continue;
      const name = line.slice(0, colon).trim().toLowerCase();
      const values = block.get(name) ?? [];
      values.push(line.slice(colon + 1).trim());
      block.set(name, values);
      last = { name, index: values.length - 1 };
    }
  }
  if (block.size > 0) blocks.push(block);
  return blocks;
}

const first = (fields: Map<string, string[]>, name: string) => fields.get(name)?.[0];

/** `rfc822; <jane@example.test>` (or a bare address) → `jane@example.test`; other address types → null. */
function address(value: string | undefined): string | null {
  if (!value) return null;
  const semicolon = value.indexOf(';');
  const type = semicolon >= 0 ? value.slice(0, semicolon).trim().toLowerCase() : 'rfc822';
  if (type !== 'rfc822' && type !== 'utf-8') return null;
  const email = value
    .slice(semicolon + 1)
    .trim()
    .replace(/^<(.*)>$/, '$1')
    .trim();
  return /^[^\s@<>]+@[^\s@<>]+$/.test(email) ? email : null;
}

/** `5.1.1` out of `5.1.1`, `5.1.1 (user unknown)`... */
function statusCode(value: string | undefined): string | null {
  return /^\s*([245]\.\d{1,3}\.\d{1,3})\b/.exec(value ?? '')?.[1] ?? null;
}

/** For a report without a Status field: the enhanced code in `smtp; 550 5.1.1 ...`, else the reply code's class. */
function statusFromDiagnostic(value: string | undefined): string | null {
  const match = /^\s*smtp\s*;\s*([245])\d\d[\s-]+(?:([245]\.\d{1,3}\.\d{1,3})\b)?/i.exec(value ?? '');
  if (!match) return null;
  return match[2] ?? `${match[1]}.0.0`;
}
