import { PassThrough } from 'node:stream';
import nodemailer, { type NodemailerError, type SMTPPoolSentMessageInfo, type Transporter } from 'nodemailer';
import { MailSendError, type Mailer, type OutgoingMail, type SendResult } from '../../ports/mailer.ts';
import { Slots } from '../../lib/slots.ts';
import { mailOptions } from './mailOptions.ts';

export interface SmtpMailerOptions {
  connectionTimeoutMs?: number;
  greetingTimeoutMs?: number;
  socketTimeoutMs?: number;
  maxConnections?: number;
}

/**
 * Sends through an SMTP relay given as `smtp://[user:pass@]host[:port]` or `smtps://…` (implicit
 * TLS). Further nodemailer options may ride in the query string (`?tls.rejectUnauthorized=false`).
 * Not idempotent: a relay that queued the message but whose 250 was lost would get it again on a
 * retry. So a failure without a reply after the whole message was handed to the connection (a
 * timeout or a dropped connection while the relay had it) is reported as permanent
 * (`outcome_unknown`): it is not sent again; a person checks.
 */
export class SmtpMailer implements Mailer {
  readonly name = 'smtp';
  readonly idempotent = false;
  private readonly transport: Transporter<SMTPPoolSentMessageInfo>;
  /** Message-Ids whose whole message the connection has read (written towards the relay after its 354). */
  private readonly handedOver = new Set<string>();
  /** One per pooled connection: a claimed attempt does not wait in the pool's queue (see Mailer.reserve). */
  private readonly slots: Slots;

  constructor(url: string, options: SmtpMailerOptions = {}) {
    const maxConnections = options.maxConnections ?? 5;
    this.slots = new Slots(maxConnections);
    this.transport = nodemailer.createTransport({
      url,
      pool: true,
      maxConnections,
      maxMessages: 100,
      // A requeue inside the pool would resend, unseen, a message the relay may already hold; the
      // caller's retry records each attempt instead.
      maxRequeues: 0,
      idleTimeout: 60_000,
      connectionTimeout: options.connectionTimeoutMs ?? 10_000,
      greetingTimeout: options.greetingTimeoutMs ?? 10_000,
      socketTimeout: options.socketTimeoutMs ?? 60_000,
      dnsTimeout: 10_000,
      logger: false,
    });
    this.transport.use('stream', (mail, done) => {
      const id = String(mail.data.messageId);
      mail.message.processFunc((input) => {
        const watched = new PassThrough();
        input.on('error', (error) => watched.destroy(error));
        watched.once('end', () => this.handedOver.add(id));
        return input.pipe(watched);
      });
      done();
    });
  }

  reserve(signal?: AbortSignal): Promise<(() => void) | null> {
    return this.slots.take(signal);
  }

  /** Sends waiting for a connection now. */
  get waitingForConnection(): number {
    return this.slots.waiting;
  }

  async send(mail: OutgoingMail): Promise<SendResult> {
    let info: SMTPPoolSentMessageInfo;
    try {
      info = await this.transport.sendMail(mailOptions(mail));
    } catch (error) {
      throw toMailSendError(error, { handedOver: this.handedOver.has(mail.messageId) });
    } finally {
      this.handedOver.delete(mail.messageId);
    }
    if (info.rejected.length > 0 && info.accepted.length === 0) {
      throw new MailSendError(`the relay refused ${info.rejected.join(', ')}`, true);
    }
    return { mailProviderMessageId: queueId(info.response) ?? info.serverMessageId ?? mail.messageId };
  }

  async close(): Promise<void> {
    this.transport.close();
  }
}

/** RFC 4954: authentication required (530), too weak (534), credentials invalid (535), encryption required (538). */
const RELAY_AUTH_CODES = new Set([530, 534, 535, 538]);

/**
 * 5xx: the relay refuses this message for good (not our credentials: those are fixed by the operator). 4xx, 503, timeouts and dropped connections: try
 * again later, unless the whole message had been handed over (`handedOver`) and no reply came: the
 * relay may hold it, so it is not sent again.
 */
export function toMailSendError(error: unknown, progress: { handedOver: boolean } = { handedOver: false }): MailSendError {
  if (error instanceof MailSendError) return error;
  const e = error as NodemailerError;
  const message = `SMTP send failed: ${e?.message ?? String(error)}`;
  if (typeof e?.responseCode === 'number') {
    // An authentication failure is about our relay credentials, not this message: a retry goes once the operator fixed them.
    if (e.code === 'EAUTH' || RELAY_AUTH_CODES.has(e.responseCode)) return new MailSendError(`${message} (the relay refused our credentials; check OUTBOUND_SMTP_URL)`, false, { cause: error });
    const permanent = e.responseCode >= 500 && e.responseCode < 600 && e.responseCode !== 503;
    return new MailSendError(message, permanent, { cause: error });
  }
  if (progress.handedOver) {
    return new MailSendError(
      `outcome_unknown: ${message} after the whole message was handed to the relay; it may have been accepted, so it is not sent again`,
      true,
      { cause: error },
    );
  }
  // No SMTP reply: a network failure, or nodemailer refusing the message itself (an invalid
  // address, a bad configuration), which no retry fixes.
  const permanent = e?.code === 'EENVELOPE' || e?.code === 'EMESSAGE' || e?.code === 'ECONFIG';
  return new MailSendError(message, permanent, { cause: error });
}

/**
 * The relay's queue id from its final reply: Postfix `250 2.0.0 Ok: queued as 4Xk2`, Exim
 * `250 OK id=1rZ-0004`, or a bare `queued as` in other servers' wording.
 */
export function queueId(response: string | undefined): string | null {
  if (!response) return null;
  const m = /\bqueued as:?\s+<?([A-Za-z0-9][A-Za-z0-9._@-]*)>?/i.exec(response) ?? /\bid=([A-Za-z0-9][A-Za-z0-9._-]*)/.exec(response);
  return m ? m[1]! : null;
}
