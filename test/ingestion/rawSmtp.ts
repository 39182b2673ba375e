import { connect, type Socket } from 'node:net';

/** A raw SMTP conversation (what a misbehaving sender does, which nodemailer would not): send a line, wait for the reply code. */
export class RawSmtp {
  private buf = '';
  private waiters: ((line: string) => void)[] = [];
  /** The line the server greeted this connection with (220, or 421 when it refused it). */
  greeted = '';
  constructor(readonly socket: Socket) {
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      this.buf += d;
      let i;
      while ((i = this.buf.indexOf('\r\n')) >= 0) {
        const line = this.buf.slice(0, i);
        this.buf = this.buf.slice(i + 2);
        if (/^\d{3} /.test(line)) this.waiters.shift()?.(line);
      }
    });
  }
  /** `localAddress`: another loopback address (127.0.0.2, …) to be another client. */
  static async open(port: number, localAddress?: string): Promise<RawSmtp> {
    const socket = connect({ port, host: '127.0.0.1', localAddress });
    const s = new RawSmtp(socket);
    const greeting = s.reply();
    await new Promise<void>((res, rej) => socket.once('connect', res).once('error', rej));
    s.greeted = await greeting;
    return s;
  }
  /** The first line the server answers a new connection with (220, or 421 when it refuses), then closed. */
  static async greeting(port: number): Promise<string> {
    const socket = connect(port, '127.0.0.1');
    const s = new RawSmtp(socket);
    const line = await s.reply();
    socket.destroy();
    return line;
  }
  reply(): Promise<string> {
    return new Promise((res) => this.waiters.push(res));
  }
  async cmd(line: string): Promise<string> {
    const r = this.reply();
    this.socket.write(line + '\r\n');
    return r;
  }
  /** Writes a chunk, waiting for the socket to drain. */
  async write(chunk: Buffer | string): Promise<void> {
    if (!this.socket.write(chunk)) await new Promise<void>((res) => this.socket.once('drain', res));
  }
  close() {
    this.socket.destroy();
  }
}
