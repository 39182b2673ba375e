import { assertNever } from '../../domain/decider.ts';
import type { Ask } from '../../domain/ingestion.ts';
import { replySubject } from '../../domain/outreachAgent.ts';
import type { Draft, DraftInput, Drafter, ReplySettings, ReplyTone } from '../../ports/drafter.ts';

export { replySubject };

export const TEMPLATE_DRAFTER_NAME = 'template-v1';

/**
 * The offline drafter: fixed wording per outcome and tone. An accept thanks the sender, names the
 * link when the opportunity is known and says what happens next; a decline is polite and commits
 * to nothing. Every draft ends with the site's sign-off and signature.
 */
export class TemplateDrafter implements Drafter {
  readonly name = TEMPLATE_DRAFTER_NAME;

  async draft(input: DraftInput): Promise<Draft> {
    const { tone } = input.settings;
    const site = oneLine(input.siteDomain);
    const paragraphs = [greeting(tone, input.fromName), ...(input.outcome === 'accept' ? accept(tone, site, input.asks) : decline(tone, site))];
    return { subject: replySubject(input.subject), text: withSignOff(paragraphs.join('\n\n'), input.settings, site), drafter: this.name };
  }
}

/** The closing line, the sender's name (or the site's team) and the signature under `-- `. */
export function withSignOff(body: string, settings: ReplySettings, siteDomain: string): string {
  const sender = settings.senderName?.trim() ? oneLine(settings.senderName) : `The ${oneLine(siteDomain)} team`;
  const closing = { friendly: `Best,\n${sender}`, formal: `Kind regards,\n${sender}`, brief: sender }[settings.tone];
  const signature = settings.signature?.trim() ? `\n\n-- \n${settings.signature.replace(/\r\n?/g, '\n').trim()}` : '';
  return `${body.trim()}\n\n${closing}${signature}\n`;
}

function greeting(tone: ReplyTone, fromName: string | null): string {
  const name = fromName && !fromName.includes('@') ? oneLine(fromName).replace(/^["']|["']$/g, '') : '';
  const first = name.split(/\s+/)[0] ?? '';
  switch (tone) {
    case 'friendly':
      return `Hi ${first || 'there'},`;
    case 'formal':
      return name ? `Dear ${name},` : 'Hello,';
    case 'brief':
      return first ? `Hi ${first},` : 'Hi,';
    default:
      return assertNever(tone);
  }
}

/** One ask names its link in the sentence; several (one reply per message) are listed, one per line. */
function accept(tone: ReplyTone, site: string, asks: Ask[]): string[] {
  const links = asks.map((ask) => placement(ask, site));
  const link = links.length === 1 ? links[0]! : null;
  const list = links.map((l) => `- ${l}`).join('\n');
  switch (tone) {
    case 'friendly':
      return [
        `Thanks so much for reaching out, and for thinking of ${site}! We'd be happy to go ahead.`,
        link
          ? `We'll add a link to ${link}. What happens next: we'll place it and reply on this thread once it's live. Nothing else is needed from you for now.`
          : links.length > 1
            ? `We'll add a link to each of these:\n${list}\nWhat happens next: we'll place them and reply on this thread once they're live. Nothing else is needed from you for now.`
            : `What happens next: we'll go through the details and follow up on this thread.`,
      ];
    case 'formal':
      return [
        `Thank you for your message and for your interest in ${site}. We are pleased to accept your proposal.`,
        link
          ? `We will add a link to ${link}. Next steps: we will publish the link and confirm on this thread once it is live. No further action is required on your part.`
          : links.length > 1
            ? `We will add a link to each of the following:\n${list}\nNext steps: we will publish the links and confirm on this thread once they are live. No further action is required on your part.`
            : 'Next steps: we will review the details and follow up on this thread.',
      ];
    case 'brief':
      if (links.length > 1) return [`Thanks, happy to go ahead. We'll link to:\n${list}\nWe'll confirm here once they're live.`];
      return [`Thanks, happy to go ahead.${link ? ` We'll link to ${link}.` : ''} We'll confirm here once it's live.`];
    default:
      return assertNever(tone);
  }
}

/** Deliberately free of "will" and of any link or date: a decline commits the site to nothing. */
function decline(tone: ReplyTone, site: string): string[] {
  switch (tone) {
    case 'friendly':
      return [
        `Thanks so much for reaching out and for thinking of ${site}. Unfortunately this isn't a fit for us, so we have to pass on it.`,
        'We really appreciate you getting in touch, and we wish you the best with your project.',
      ];
    case 'formal':
      return [
        `Thank you for contacting ${site}. After careful consideration, we are unable to accept this proposal.`,
        'We appreciate your interest and wish you every success.',
      ];
    case 'brief':
      return ["Thanks for reaching out. This isn't a fit for us, so we have to pass. Best of luck with it."];
    default:
      return assertNever(tone);
  }
}

function placement(ask: Ask, site: string): string {
  const anchor = ask.anchorText ? ` with the anchor text "${oneLine(ask.anchorText)}"` : '';
  return `${oneLine(ask.targetUrl)}${anchor} on ${ask.sourceUrl ? oneLine(ask.sourceUrl) : site}`;
}

const MAX_FIELD = 500;

/** Text from the inbound message goes into headers and sentences: one line, bounded. */
const oneLine = (text: string) => text.replace(/[\r\n\t\u2028\u2029]+/g, ' ').replace(/\s{2,}/g, ' ').trim().slice(0, MAX_FIELD);
