import { timingSafeEqual } from 'node:crypto';
import type { SecretBox } from '../ports/secretBox.ts';

/** 96 bits of HMAC: nobody guesses the address of a mail they did not receive. */
const TAG_BYTES = 12;

/**
 * The envelope sender (Return-Path) of one mail the service sends: `bounce+<message id>.<tag>@<MAIL_DOMAIN>`
 * (VERP). A delivery report sent there is about that mail and its one recipient, so it needs no
 * returned copy to be believed, and the site's forwarding address is not shown to the recipient.
 * The tag is an HMAC of the id under the service's secret key: a recipient who knows its own
 * address cannot make another mail's. Lower case, 58 characters before the `@` for a 26-character id.
 */
export function bounceAddress(secrets: Pick<SecretBox, 'tag'>, messageId: string, mailDomain: string): string {
  const id = messageId.toLowerCase();
  return `bounce+${id}.${tagOf(secrets, id)}@${mailDomain.toLowerCase()}`;
}

/** The id of the mail a bounce address belongs to (upper case, as ids are stored), or null for any other address or a wrong tag. */
export function bouncedMessageId(secrets: Pick<SecretBox, 'tag'>, address: string, mailDomain: string): string | null {
  const m = /^bounce\+([0-9a-z]{1,40})\.([0-9a-f]{24})@(.+)$/i.exec(address.trim());
  if (!m || m[3]!.toLowerCase() !== mailDomain.toLowerCase()) return null;
  const id = m[1]!.toLowerCase();
  const given = Buffer.from(m[2]!.toLowerCase(), 'hex');
  return timingSafeEqual(given, Buffer.from(tagOf(secrets, id), 'hex')) ? id.toUpperCase() : null;
}

const tagOf = (secrets: Pick<SecretBox, 'tag'>, id: string) => secrets.tag('bounce address', id).subarray(0, TAG_BYTES).toString('hex');
