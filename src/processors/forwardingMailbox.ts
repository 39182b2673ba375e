import { createHash } from 'node:crypto';
import { isEmailAddress, normaliseEmail } from '../domain/email.ts';
import { getMessage } from '../readModels/messages.ts';
import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import { type IngestionContext, ingestMessage } from '../commands/ingestion.ts';
import { truncateText } from '../domain/text.ts';
import { ServiceError } from '../domain/errors.ts';
import { EventTooLargeError } from '../ports/eventStore.ts';
import type { DeliveryReport } from '../adapters/mail/deliveryReport.ts';
import type { InboundMail } from '../adapters/mail/inboundMail.ts';
import { suppressContact } from '../commands/suppression.ts';
import { bouncedMessageId } from '../domain/bounceAddress.ts';
import { forwardingToken, onDomain, pitchSender } from '../domain/forwarded.ts';
import { findUserByEmail } from '../readModels/users.ts';
import { type SiteDoc, findSiteByForwardingToken } from '../readModels/sites.ts';
import { clientGroup } from '../lib/clientGroup.ts';
import { startMailReader } from './mailReader.ts';
import { SMTP_LIMITS, type SmtpLimits, shareConnections } from './smtpLimits.ts';
import { SmtpReply } from './smtpReply.ts';

export interface ForwardingMailboxOptions {
  host: string;
  port: number;
  mailDomain: string;
  maxMessageBytes: number;
  /**
   * The most of a mail's text and of its HTML stored, each (config: INGESTION_BODY_LIMIT_BYTES, the
   * REST body's limit): a 10 MiB message stored ~21 MB per site and answered its conversation in 9 MB.
   */
  maxBodyChars?: number;
  /** What one sender may hold: the defaults are SMTP_LIMITS (config: SMTP_MAX_CLIENTS and the rest). */
  limits?: Partial<SmtpLimits>;
  /** A failure of the mailbox itself (the event store, a bug). */
  onError?: (error: unknown) => void;
  /** A connection's error that its client caused (it went away mid-message, it spoke garbage TLS). */
  onClientError?: (error: unknown) => void;
  /** A site's copy refused for good after DATA (its team's subscription is not paid): the sender hears of it only when no other site took the message. */
  onCopyRefused?: (refusal: { teamId: string; siteId: string; code: string; message: string }) => void;
  /** Threads that parse received mail (config: SMTP_PARSE_THREADS). */
  parseThreads?: number;
  /** A mail whose parsing takes longer is refused with 554 (config: SMTP_PARSE_TIMEOUT_MS). */
  parseTimeoutMs?: number;
}


export interface ForwardingMailbox {
  port: number;
  close(): Promise<void>;
}

/**
 * The message's header section, at most: the parsers take time growing with the square of a header
 * folded over many lines or of a To with thousands of addresses (a 320 KB header held the process
 * for 11 s, the API with it). Real mail stays far below (a few hundred lines, tens of KB at most).
 */
const MAX_HEADER_BYTES = 128 * 1024;
const MAX_HEADER_LINES = 4_000;

function headerTooBig(raw: Buffer): boolean {
  // The first empty line ends it (CRLF, or a bare LF from a sloppy client).
  const ends = [raw.indexOf('\r\n\r\n'), raw.indexOf('\n\n')].filter((i) => i >= 0);
  const header = ends.length === 0 ? raw : raw.subarray(0, Math.min(...ends));
  if (header.length > MAX_HEADER_BYTES) return true;
  let lines = 1;
  for (let i = header.indexOf(10); i >= 0 && lines <= MAX_HEADER_LINES; i = header.indexOf(10, i + 1)) lines++;
  return lines > MAX_HEADER_LINES;
}

/**
 * The idempotency key of a message without a Message-Id: a digest of what a sending server's retry
 * sends again unchanged (the envelope sender, the Date, From and Subject headers, the bodies), and
 * not of trace headers a relay may add. Two different messages with all of these equal are one.
 */
function contentKey(retryStable: string[], session: SMTPServerSession): string {
  const envelopeFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
  return `content:${createHash('sha256').update(JSON.stringify([envelopeFrom, ...retryStable])).digest('hex')}`;
}

/**
 * The forwarding mailbox: an SMTP listener for `forward+<token>@<MAIL_DOMAIN>` and for the bounce
 * addresses our mail is sent from (`bounce+<message id>.<tag>@<MAIL_DOMAIN>`). Unknown recipients
 * are refused at RCPT TO (550). Each accepted message is ingested once per recipient site through
 * the same IngestMessage command as the REST endpoint, with extraction on; its Message-Id is the
 * idempotency key (scoped to the site), so a sending server's retry never ingests twice. Delivery
 * reports suppress the contact they concern and are not ingested; anything else sent to a bounce
 * address (an out-of-office answer, RFC 3834) is accepted and dropped.
 */
export async function startForwardingMailbox(ctx: IngestionContext, options: ForwardingMailboxOptions): Promise<ForwardingMailbox> {
  /** A member of the site's team: an address on the site's domain, or one of the team's users. */
  const isTeamMember = async (address: string, site: SiteDoc): Promise<boolean> =>
    onDomain(address, site.domain) || (await findUserByEmail(ctx.readModels, normaliseEmail(address)))?.teamId === site.teamId;

  const siteOf = async (address: string): Promise<SiteDoc | null> => {
    const token = forwardingToken(address, options.mailDomain);
    if (!token) return null;
    return findSiteByForwardingToken(ctx.readModels, token);
  };

  const limits = { ...SMTP_LIMITS, ...options.limits };
  const reader = startMailReader({ threads: options.parseThreads, timeoutMs: options.parseTimeoutMs, maxMessageBytes: options.maxMessageBytes, onError: options.onError });
  /** Each connection's parse in progress, abandoned when the connection closes (its client will not hear the answer). */
  const connectionGone = new Map<string, AbortController>();
  const read = async (raw: Buffer, reportsOnly: boolean, session: SMTPServerSession): Promise<InboundMail> => {
    const gone = new AbortController();
    connectionGone.set(session.id, gone);
    try {
      return await reader.read(raw, reportsOnly, { signal: gone.signal, clientAddress: clientGroup(session.remoteAddress) });
    } finally {
      connectionGone.delete(session.id);
    }
  };
  const server = new SMTPServer({
    logger: false,
    banner: 'Outreach forwarding mailbox',
    authOptional: true,
    disabledCommands: ['AUTH'],
    size: options.maxMessageBytes,
    // `shareConnections` holds connections to maxClients; the margin is for those it closed that have not gone yet.
    maxClients: limits.maxClients * 2,
    socketTimeout: limits.socketTimeoutMs,
    // Nothing reads the client's reverse name, and its lookup (up to 1.5 s, in a zone the sender controls) would hold a slot.
    disableReverseLookup: true,
    // A stop waits this long for connections in a transaction (smtp-server's default, 30 s, outlasts SHUTDOWN_TIMEOUT_MS).
    closeTimeout: 5_000,
    onClose(session) {
      connectionGone.get(session.id)?.abort();
    },
    onRcptTo(address, session, callback) {
      if (session.envelope.rcptTo.length >= limits.maxRecipients) return callback(new SmtpReply(452, '4.5.3 too many recipients'));
      if (bouncedMessageId(ctx.secrets, address.address, options.mailDomain)) return callback();
      siteOf(address.address).then(
        (site) => {
          if (!site) return callback(new SmtpReply(550, `5.1.1 <${address.address}>: no such forwarding mailbox`));
          // Refused here, per recipient: after DATA one answer covers every recipient of the message.
          // Not from the null sender: a delivery report to the site still suppresses its contact.
          const nullSender = !session.envelope.mailFrom || session.envelope.mailFrom.address === '';
          if (!site.licensed && !nullSender) return callback(new SmtpReply(550, `5.7.1 <${address.address}>: the site has no active licence`));
          callback();
        },
        (error) => {
          options.onError?.(error);
          callback(new SmtpReply(451, '4.3.0 temporary failure, try again later'));
        },
      );
    },
    onData(stream, session, callback) {
      receive(stream, session).then(
        () => callback(null),
        (error) => {
          if (!(error instanceof SmtpReply)) options.onError?.(error);
          callback(error instanceof SmtpReply ? error : new SmtpReply(451, '4.3.0 temporary failure, try again later'));
        },
      );
    },
  });

  async function receive(stream: SMTPServerDataStream, session: SMTPServerSession) {
    const chunks: Buffer[] = [];
    let size = 0;
    // Read to the end (the answer comes after the final dot), but past the limit nothing is kept.
    try {
      for await (const chunk of stream) {
        size += (chunk as Buffer).length;
        if (size <= options.maxMessageBytes) chunks.push(chunk as Buffer);
      }
    } catch (error) {
      // The client went away before the final dot: nothing was accepted, nothing is lost.
      options.onClientError?.(error);
      throw new SmtpReply(451, '4.3.0 the message was not received in full');
    }
    if (stream.sizeExceeded || size > options.maxMessageBytes) throw new SmtpReply(552, '5.3.4 message too big');
    const raw = Buffer.concat(chunks);
    if (headerTooBig(raw)) throw new SmtpReply(552, `5.3.4 header section too big (at most ${MAX_HEADER_BYTES} bytes and ${MAX_HEADER_LINES} lines)`);
    // A bounce or a complaint about the agent's mail: the contact goes on the suppression list, nothing is ingested.
    const bounced = session.envelope.rcptTo.map((r) => bouncedMessageId(ctx.secrets, r.address, options.mailDomain)).filter((id) => id !== null);
    const reportsOnly = bounced.length === session.envelope.rcptTo.length;
    const mail = await read(raw, reportsOnly, session);
    if (mail.kind === 'report') for (const id of new Set(bounced)) await suppressRecipientOf(id, mail.report);
    if (reportsOnly || mail.kind === 'other') return;
    if (mail.kind === 'report') return suppressReported(mail.report, mail.returnedReplyIds, session);
    const { retryStable, forwardedFrom, from, fromName, ...received } = mail.message;
    const maxBody = options.maxBodyChars ?? Infinity;
    const message = { ...received, bodyText: truncateText(received.bodyText, maxBody), bodyHtml: received.bodyHtml === null ? null : truncateText(received.bodyHtml, maxBody) };
    if (!from) throw new SmtpReply(550, '5.1.7 the message has no sender address');
    const idempotencyKey = message.messageId ?? contentKey(retryStable, session);
    // Each recipient site on its own: one site's refusal must not decide another team's copy. Any
    // temporary failure asks the sender to retry the whole message (the sites that took it find it
    // already ingested); a permanent one alone is the answer only when no site took the message.
    let taken = 0;
    let refusal: SmtpReply | null = null;
    for (const rcpt of session.envelope.rcptTo) {
      const site = await siteOf(rcpt.address);
      if (!site) continue;
      const sender = pitchSender({ from, fromName, forwardedFrom }, site, await isTeamMember(from, site));
      // The same rule as the REST body's `from`, so both doors store only real addresses (per site: the
      // forwarded block counts only where the mail's sender belongs to the team).
      if (!isEmailAddress(sender.from)) {
        refusal ??= new SmtpReply(550, '5.1.7 the sender address is not a valid email address');
        continue;
      }
      try {
        await ingestMessage(ctx, {
          site,
          idempotency: { scope: `smtp:${site.id}`, key: idempotencyKey },
          channel: 'smtp',
          runExtraction: true,
          message: { ...message, ...sender },
        });
      } catch (error) {
        if (error instanceof EventTooLargeError) throw new SmtpReply(552, '5.3.4 message too big for the event store');
        if (!(error instanceof ServiceError)) throw error;
        if (error.code === 'SERVICE_UNAVAILABLE' && error.cause) options.onError?.(error.cause);
        const permanent = error.code === 'PAYMENT_REQUIRED' || error.code === 'SITE_NOT_LICENSED';
        const reply = new SmtpReply(permanent ? 550 : 451, `${permanent ? '5.7.1' : '4.7.0'} ${error.message}`);
        if (!permanent) throw reply;
        options.onCopyRefused?.({ teamId: site.teamId, siteId: site.id, code: error.code, message: error.message });
        refusal ??= reply;
        continue;
      }
      taken++;
    }
    if (refusal && taken === 0) throw refusal;
  }

  /** A report sent to a mail's own bounce address is about that mail's one recipient, whatever address it names (a forward's may differ). */
  async function suppressRecipientOf(messageId: string, report: DeliveryReport) {
    const message = await getMessage(ctx.readModels, messageId);
    // The tag proves we made this address, so the mail was drafted: a missing doc means the read
    // models are behind (a follower node, a rebuild). Ask the reporting MTA to retry rather than
    // answer 250 and lose its one report.
    if (!message) throw new SmtpReply(451, '4.3.0 not ready for this report yet, try again later');
    if (message.direction !== 'outbound' || !message.to) return;
    const [reason, source] = report.kind === 'bounce' ? ['bounced', 'bounce'] : ['complained', 'complaint'];
    await suppressContact(ctx, { teamId: message.teamId, teamSiteIds: [message.siteId], siteId: message.siteId, email: message.to, reason, source });
  }

  /** Reports sent to the forwarding address, where mail sent before bounce addresses existed returns its bounces. */
  async function suppressReported(report: DeliveryReport, returned: string[], session: SMTPServerSession) {
    const contacts =
      report.kind === 'bounce'
        ? report.recipients.map((r) => ({ email: r.email, reason: 'bounced', source: 'bounce' }))
        : [{ email: report.email, reason: 'complained', source: 'complaint' }];
    for (const rcpt of session.envelope.rcptTo) {
      const site = await siteOf(rcpt.address);
      if (!site) continue;
      for (const c of contacts) {
        // Anyone who knows the address (mail sent before bounce addresses named it as Return-Path) can
        // send a report: it counts only when it returns a mail this site sent to that very address
        // (its Message-Id, `reply.<id>@…`, carries an id nobody but the recipient has seen).
        if (!(await sentTo(site.id, returned, c.email))) continue;
        await suppressContact(ctx, { teamId: site.teamId, teamSiteIds: [site.id], siteId: site.id, ...c });
      }
    }
  }

  async function sentTo(siteId: string, returned: string[], email: string): Promise<boolean> {
    for (const id of returned) {
      const message = await getMessage(ctx.readModels, id);
      if (message?.direction === 'outbound' && message.siteId === siteId && normaliseEmail(message.to ?? '') === normaliseEmail(email)) return true;
    }
    return false;
  }

  shareConnections(server, limits);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  }).catch(async (error: unknown) => {
    await reader.close();
    throw error;
  });
  // A connection's error (smtp-server names its remoteAddress: a client gone, a TLS handshake of
  // garbage) is its client's doing, which anyone can cause: not the service's failure.
  server.on('error', (error) => ('remoteAddress' in error ? options.onClientError : options.onError)?.(error));
  return {
    port: (server.server.address() as AddressInfo).port,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await reader.close();
    },
  };
}
