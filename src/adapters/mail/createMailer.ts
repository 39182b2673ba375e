import type { Config } from '../../config.ts';
import type { Clock } from '../../ports/clock.ts';
import type { Mailer } from '../../ports/mailer.ts';
import { OutboxMailer } from './outboxMailer.ts';
import { SmtpMailer } from './smtpMailer.ts';

/** The SMTP relay when OUTBOUND_SMTP_URL is set, else the embedded outbox under DATA_DIR. */
export function createMailer(config: Pick<Config, 'OUTBOUND_SMTP_URL' | 'DATA_DIR'>, options: { clock?: Clock } = {}): Mailer {
  return config.OUTBOUND_SMTP_URL ? new SmtpMailer(config.OUTBOUND_SMTP_URL) : OutboxMailer.inDataDir(config.DATA_DIR, options);
}
