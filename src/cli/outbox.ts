import { type Command, InvalidArgumentError } from 'commander';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { OUTBOX_FILE, OutboxMailer, type OutboxEntry } from '../adapters/mail/outboxMailer.ts';
import { TenancyError } from '../commands/tenancy.ts';
import { loadConfig } from '../config.ts';
import { decimal, print } from './output.ts';

/** The outbox is read without the event store: only DATA_DIR matters. Null when nothing was ever sent. */
async function withOutbox<T>(fn: (outbox: OutboxMailer | null, relay: boolean) => T): Promise<T> {
  const config = loadConfig();
  const file = join(config.DATA_DIR, OUTBOX_FILE);
  const outbox = existsSync(file) ? new OutboxMailer(file) : null;
  try {
    return fn(outbox, Boolean(config.OUTBOUND_SMTP_URL));
  } finally {
    await outbox?.close();
  }
}

const angleBrackets = (id: string) => (id.startsWith('<') ? id : `<${id}>`);

const positiveInt = (value: string): number => {
  const n = decimal(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('--limit must be a positive integer');
  return n;
};

const listed = (e: OutboxEntry) => ({ time: e.createdAt, to: e.to, from: e.from, subject: e.subject, messageId: e.messageId, inReplyTo: e.inReplyTo });

/** `outreach outbox` (newest first) and `outreach outbox show <messageId>` (the raw message). */
export function registerOutboxCommands(program: Command, json: () => boolean): void {
  const outbox = program
    .command('outbox')
    .description("the agent's sent mail kept in the embedded outbox (DATA_DIR/outbox.sqlite), newest first")
    .option('--limit <n>', 'how many messages', positiveInt, 50)
    .option('--to <address>', 'only messages to this address')
    .action(async (opts: { limit: number; to?: string }) =>
      withOutbox((box, relay) => {
        const messages = (box?.listOutbox({ limit: opts.limit, ...(opts.to !== undefined ? { to: opts.to } : {}) }) ?? []).map(listed);
        const lines = [`${messages.length} message${messages.length === 1 ? '' : 's'} in the outbox`];
        if (relay) lines.push('(OUTBOUND_SMTP_URL is set: replies go to the SMTP relay, not to this outbox)');
        for (const m of messages) lines.push(`${m.time}  ${m.to}  ${m.subject}  ${m.messageId}`);
        print(json(), { messages }, lines.join('\n'));
      }),
    );
  outbox
    .command('show <messageId>')
    .description('print one message as stored: the full RFC 5322 text (angle brackets optional)')
    .action(async (messageId: string) =>
      withOutbox((box) => {
        const id = angleBrackets(messageId.trim());
        const message = box?.getOutboxMessage(id);
        if (!message) throw new TenancyError(`no message ${id} in the outbox`);
        if (json()) print(true, { ...listed(message), raw: message.raw.toString('utf8') }, '');
        else process.stdout.write(message.raw);
      }),
    );
}
