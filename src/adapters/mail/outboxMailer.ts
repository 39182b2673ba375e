import type Database from 'better-sqlite3';
import nodemailer, { type StreamSentMessageInfo, type Transporter } from 'nodemailer';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Clock } from '../../ports/clock.ts';
import { systemClock } from '../clock/systemClock.ts';
import { MailSendError, type Mailer, type OutgoingMail, type SendResult } from '../../ports/mailer.ts';
import { openDatabase } from '../sqlite/openDatabase.ts';
import { mailOptions } from './mailOptions.ts';

export const OUTBOX_FILE = 'outbox.sqlite';

/** One stored message, as `outreach outbox` lists it. */
export interface OutboxEntry {
  messageId: string;
  to: string;
  from: string;
  subject: string;
  inReplyTo: string | null;
  /** ISO 8601, when the message was first stored. */
  createdAt: string;
}

export interface OutboxMessage extends OutboxEntry {
  /** The RFC 5322 message, CRLF line ends, exactly the bytes SMTP would send. */
  raw: Buffer;
}

interface Row {
  message_id: string;
  to_address: string;
  from_address: string;
  subject: string;
  in_reply_to: string | null;
  created_at: string;
  raw?: Buffer;
}

/**
 * The embedded mail port: each reply is stored, never delivered, in `outbox.sqlite` under the data
 * directory, for the operator to read with `outreach outbox`. Keyed by Message-Id, so a second send
 * of the same reply (a retry, a second worker) stores nothing and answers as the first.
 */
export class OutboxMailer implements Mailer {
  readonly name = 'outbox';
  readonly idempotent = true;
  private readonly db: Database.Database;
  private readonly composer: Transporter<StreamSentMessageInfo>;
  private readonly clock: Clock;

  constructor(file: string, options: { clock?: Clock } = {}) {
    this.clock = options.clock ?? systemClock;
    this.db = openDatabase(file, 'FULL');
    this.db.exec(`CREATE TABLE IF NOT EXISTS outbox (
      id INTEGER PRIMARY KEY,
      message_id TEXT NOT NULL UNIQUE,
      to_address TEXT NOT NULL,
      from_address TEXT NOT NULL,
      subject TEXT NOT NULL,
      in_reply_to TEXT,
      created_at TEXT NOT NULL,
      raw BLOB NOT NULL
    );
    CREATE INDEX IF NOT EXISTS outbox_to ON outbox (to_address COLLATE NOCASE, id)`);
    this.composer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  }

  /** Opens `outbox.sqlite` under the data directory. */
  static inDataDir(dataDir: string, options: { clock?: Clock } = {}): OutboxMailer {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    return new OutboxMailer(join(dataDir, OUTBOX_FILE), options);
  }

  async send(mail: OutgoingMail): Promise<SendResult> {
    const options = mailOptions(mail);
    try {
      if (!this.has(mail.messageId)) {
        const { message } = await this.composer.sendMail(options);
        if (!Buffer.isBuffer(message)) throw new Error('the stream transport was asked for a Buffer');
        this.db
          .prepare(
            `INSERT INTO outbox (message_id, to_address, from_address, subject, in_reply_to, created_at, raw)
             VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (message_id) DO NOTHING`,
          )
          .run(mail.messageId, mail.to.address, mail.from.address, mail.subject, mail.inReplyTo, this.clock.now().toISOString(), message);
      }
    } catch (error) {
      // A busy or full disk passes; a retry may succeed.
      throw new MailSendError(`outbox write failed: ${(error as Error).message}`, false, { cause: error });
    }
    return { mailProviderMessageId: mail.messageId };
  }

  async holds(messageId: string): Promise<boolean> {
    return this.has(messageId);
  }

  /** Newest first; `to` matches the recipient address, ignoring case. */
  listOutbox(query: { limit: number; to?: string }): OutboxEntry[] {
    const columns = 'message_id, to_address, from_address, subject, in_reply_to, created_at';
    const rows = (
      query.to === undefined
        ? this.db.prepare(`SELECT ${columns} FROM outbox ORDER BY id DESC LIMIT ?`).all(query.limit)
        : this.db.prepare(`SELECT ${columns} FROM outbox WHERE to_address = ? COLLATE NOCASE ORDER BY id DESC LIMIT ?`).all(query.to, query.limit)
    ) as Row[];
    return rows.map(entry);
  }

  getOutboxMessage(messageId: string): OutboxMessage | null {
    const row = this.db.prepare('SELECT * FROM outbox WHERE message_id = ?').get(messageId) as Row | undefined;
    return row ? { ...entry(row), raw: row.raw! } : null;
  }

  async close(): Promise<void> {
    this.composer.close();
    this.db.close();
  }

  private has(messageId: string): boolean {
    return this.db.prepare('SELECT 1 FROM outbox WHERE message_id = ?').get(messageId) !== undefined;
  }
}

function entry(row: Row): OutboxEntry {
  return {
    messageId: row.message_id,
    to: row.to_address,
    from: row.from_address,
    subject: row.subject,
    inReplyTo: row.in_reply_to,
    createdAt: row.created_at,
  };
}
