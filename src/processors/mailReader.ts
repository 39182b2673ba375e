import { createHash } from 'node:crypto';
import type { InboundMail } from '../adapters/mail/inboundMail.ts';
import { TimedWorkError, startTimedWorkers } from '../lib/timedWorkers.ts';
import { SmtpReply } from './smtpReply.ts';

/** Mails remembered as over the parse budget once (a 451), so that their next try is refused for good (a 554). */
const OVERRUNS_KEPT = 10_000;

export interface MailReader {
  /** The mail read (`readInboundMail`), or an SmtpReply: 554 for a mail that cannot be read, 451 to try later. */
  read(raw: Buffer, reportsOnly: boolean, from: { signal: AbortSignal; clientAddress: string }): Promise<InboundMail>;
  close(): Promise<void>;
}

/**
 * The forwarding mailbox's parsing. The parsers' cost can grow faster than their input (a MIME
 * part's header folded 80,000 times took 25 s): they run off the thread the API shares, on
 * `threads` worker threads (SMTP_PARSE_THREADS), each mail within `timeoutMs` (SMTP_PARSE_TIMEOUT_MS)
 * and a heap limit.
 */
export function startMailReader(options: { threads?: number; timeoutMs?: number; maxMessageBytes: number; onError?: (error: unknown) => void }): MailReader {
  const threads = options.threads ?? 2;
  const parsers = startTimedWorkers<{ raw: Uint8Array; reportsOnly: boolean }, InboundMail>(new URL('../adapters/mail/inboundMailThread.ts', import.meta.url), {
    threads,
    timeoutMs: options.timeoutMs ?? 10_000,
    // mailparser holds a few copies of a message: 48 MiB per MiB of the largest, within 256 MiB–1 GiB.
    maxHeapMb: Math.min(1024, Math.max(256, Math.ceil(options.maxMessageBytes / (1024 * 1024)) * 48)),
    // Ordinary mail parses in milliseconds: a longer queue means someone is sending mail made to be slow.
    maxQueued: threads * 8,
    // One sender at most half of it: the others always find room (and the threads take senders in turn,
    // see run's key). Less refused a relay's parallel deliveries from one address (bench/forwardingMailbox).
    maxQueuedPerKey: threads * 4,
    onError: options.onError,
  });
  /** Digests of mails that ran over the budget once, oldest first, at most OVERRUNS_KEPT. */
  const overruns = new Set<string>();
  const overranBefore = (raw: Buffer): boolean => {
    const digest = createHash('sha256').update(raw).digest('hex');
    if (overruns.has(digest)) return true;
    overruns.add(digest);
    if (overruns.size > OVERRUNS_KEPT) overruns.delete(overruns.values().next().value!);
    return false;
  };
  return {
    async read(raw, reportsOnly, { signal, clientAddress }) {
      try {
        return await parsers.run({ raw: new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength), reportsOnly }, { signal, key: clientAddress });
      } catch (error) {
        if (!(error instanceof TimedWorkError)) throw error;
        switch (error.reason) {
          case 'over_budget':
            // The budget is wall-clock time, which a busy machine stretches: a mail over it gets one more
            // try later (451), and is refused for good when it runs over again.
            if (!overranBefore(raw)) throw new SmtpReply(451, `4.3.0 the message took too long to read (${error.message}); try again later`);
            throw new SmtpReply(554, `5.6.0 the message is too complex to read (${error.message})`);
          case 'over_memory':
            // Memory is not stretched by a busy machine: the same mail would need as much again.
            throw new SmtpReply(554, `5.6.0 the message is too complex to read (${error.message})`);
          case 'failed':
            // The parse is pure: what failed on this mail fails on it again. Logged: it may be a bug.
            options.onError?.(error);
            throw new SmtpReply(554, '5.6.0 the message could not be read');
          case 'queue_full':
          case 'closed':
          case 'abandoned':
            throw new SmtpReply(451, '4.3.2 the mailbox is busy, try again later');
        }
      }
    },
    close: () => parsers.close(),
  };
}
