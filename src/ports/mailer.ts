export interface MailAddress {
  name: string | null;
  address: string;
}

/** One reply to send. Every id carries its angle brackets, as in the header. */
export interface OutgoingMail {
  /** RFC 5322 Message-Id we assign (deterministic per reply, e.g. `<reply.<id>@<sendingDomain>>`), with angle brackets. */
  messageId: string;
  from: MailAddress;
  to: MailAddress;
  replyTo?: MailAddress | null;
  subject: string;
  text: string;
  /** Message-Id being answered, with angle brackets. */
  inReplyTo: string | null;
  /** The thread's chain, oldest first, with angle brackets. */
  references: string[];
  /** Envelope sender (Return-Path) where bounces go; the From address when absent. */
  returnPath?: string | null;
}

export interface SendResult {
  /** The id the mail provider gave the message (an SMTP queue id), or our Message-Id when it gave none. */
  mailProviderMessageId: string;
}

/** A send that did not go through. `permanent`: retrying the same message will fail the same way. */
export class MailSendError extends Error {
  constructor(
    message: string,
    readonly permanent: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'MailSendError';
  }
}

/** The mail port: the agent sends its replies through it. */
export interface Mailer {
  readonly name: string;
  /** True when sending the same messageId twice delivers it once (the embedded outbox); false for SMTP. */
  readonly idempotent: boolean;
  send(mail: OutgoingMail): Promise<SendResult>;
  /** An idempotent mailer: whether it already holds this Message-Id (sent before, by a worker that stopped before recording it). */
  holds?(messageId: string): Promise<boolean>;
  /**
   * A mailer whose sends go out a few at a time (an SMTP pool's connections): a slot to hold from
   * before an attempt is claimed until its outcome is known, so that a crash leaves at most that many
   * attempts claimed (outcome unknown: a person checks) rather than every one queued behind them.
   * Null when `signal` aborted first. Absent: no limit.
   */
  reserve?(signal?: AbortSignal): Promise<(() => void) | null>;
  close(): Promise<void>;
}

/** One of the mailer's send slots (see `reserve`), a release that does nothing when it has none; null when `signal` aborted first. */
export async function takeSendSlot(mailer: Mailer, signal?: AbortSignal): Promise<(() => void) | null> {
  return mailer.reserve ? mailer.reserve(signal) : () => {};
}

/** Runs `fn` (claim, send, record) holding one of the mailer's send slots; `wait.onAbort()`'s error when `wait.signal` aborts first. */
export async function withSendSlot<T>(mailer: Mailer, fn: () => Promise<T>, wait: { signal: AbortSignal; onAbort: () => Error }): Promise<T> {
  const release = await takeSendSlot(mailer, wait.signal);
  if (!release) throw wait.onAbort();
  try {
    return await fn();
  } finally {
    release();
  }
}
