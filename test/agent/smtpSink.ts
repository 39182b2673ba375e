import { simpleParser, type ParsedMail } from 'mailparser';
import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerDataStream } from 'smtp-server';

export interface ReceivedMail {
  mailFrom: string;
  rcptTo: string[];
  raw: Buffer;
  parsed: ParsedMail;
}

/** How the sink answers: a reply code (and text) for a recipient or for the message, or the final 250 text. */
export interface SinkBehaviour {
  rcpt?: (address: string) => { code: number; message: string } | null;
  data?: (raw: Buffer) => { code: number; message: string } | null;
  /** Text after `250 ` for an accepted message (default: smtp-server's `OK: message queued`). */
  accepted?: () => string | undefined;
  auth?: { user: string; pass: string };
}

export interface SmtpSink {
  port: number;
  url: string;
  received: ReceivedMail[];
  behaviour: SinkBehaviour;
  close(): Promise<void>;
}

class Reply extends Error {
  constructor(readonly responseCode: number, message: string) {
    super(message);
  }
}

/** A real SMTP server on 127.0.0.1 (random port) that keeps what it accepts. */
export async function startSmtpSink(behaviour: SinkBehaviour = {}): Promise<SmtpSink> {
  const received: ReceivedMail[] = [];
  const sink = { behaviour } as { behaviour: SinkBehaviour };
  const server = new SMTPServer({
    logger: false,
    hideSTARTTLS: true,
    authOptional: !behaviour.auth,
    allowInsecureAuth: true,
    authMethods: ['PLAIN', 'LOGIN'],
    onAuth(auth, _session, callback) {
      const want = sink.behaviour.auth;
      if (want && auth.username === want.user && auth.password === want.pass) return callback(null, { user: auth.username });
      callback(new Reply(535, '5.7.8 authentication failed'));
    },
    onRcptTo(address, _session, callback) {
      const answer = sink.behaviour.rcpt?.(address.address);
      callback(answer ? new Reply(answer.code, answer.message) : null);
    },
    onData(stream: SMTPServerDataStream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks);
        const answer = sink.behaviour.data?.(raw);
        if (answer) return callback(new Reply(answer.code, answer.message));
        simpleParser(raw).then(
          (parsed) => {
            received.push({
              mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              rcptTo: session.envelope.rcptTo.map((r) => r.address),
              raw,
              parsed,
            });
            const text = sink.behaviour.accepted?.();
            if (text === undefined) callback(null);
            else callback(null, text);
          },
          (error: Error) => callback(error),
        );
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    url: `smtp://127.0.0.1:${port}`,
    received,
    get behaviour() {
      return sink.behaviour;
    },
    set behaviour(b: SinkBehaviour) {
      sink.behaviour = b;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface HoldingRelay {
  url: string;
  /** The Message-ID of each message given in full, in order. */
  handed: string[];
  /** Every RCPT TO address, in order. */
  recipients: string[];
  /** While true, a message given in full gets no answer until `releaseAll` (or never). */
  holding: boolean;
  releaseAll(): void;
  close(): Promise<void>;
}

/** A real SMTP relay on 127.0.0.1 that can hold its answers: the pool's connections stay busy, as with a slow relay. */
export async function startHoldingRelay(): Promise<HoldingRelay> {
  const held: Array<() => void> = [];
  const relay: Omit<HoldingRelay, 'url' | 'close'> = {
    handed: [],
    recipients: [],
    holding: true,
    releaseAll: () => {
      for (const answer of held.splice(0)) answer();
    },
  };
  const server = new SMTPServer({
    logger: false,
    hideSTARTTLS: true,
    authOptional: true,
    onRcptTo(address, _session, callback) {
      relay.recipients.push(address.address);
      callback();
    },
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        relay.handed.push(/^Message-ID: (.*)$/im.exec(Buffer.concat(chunks).toString())?.[1] ?? '?');
        if (relay.holding) held.push(() => callback(null));
        else callback(null);
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(relay, {
    url: `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}
