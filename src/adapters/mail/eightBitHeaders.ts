import { isUtf8 } from 'node:buffer';
import { TextDecoder } from 'node:util';

/**
 * A header section holding raw 8-bit bytes that are not UTF-8 (old mail clients write a name or a
 * subject in Latin-1 and the like without encoding it; RFC 6532 allows raw UTF-8 only), read in the
 * charset the message declares for its text, else windows-1252, and written back as UTF-8: the
 * parser reads raw header bytes as UTF-8 and made every such character U+FFFD. A section that is
 * ASCII or UTF-8 already, and the body, are left as they are.
 */
export function headersAsUtf8(raw: Buffer): Buffer {
  const end = headerSectionEnd(raw);
  const head = raw.subarray(0, end);
  if (isUtf8(head)) return raw;
  return Buffer.concat([Buffer.from(decoderFor(declaredCharset(head)).decode(head), 'utf8'), raw.subarray(end)]);
}

/** Where the header section ends: after its last line (the blank line and the body follow), else the end of the mail. */
function headerSectionEnd(raw: Buffer): number {
  // A mail that starts with its blank line has no header section (the parser sees none either).
  if (raw[0] === 0x0a || (raw[0] === 0x0d && raw[1] === 0x0a)) return 0;
  const crlf = raw.indexOf('\r\n\r\n');
  const end = crlf >= 0 ? crlf + 2 : raw.length;
  // A mail with bare LF line ends; looked for before the CRLF end only (not through a whole CRLF body).
  const lf = raw.subarray(0, end).indexOf('\n\n');
  return lf >= 0 ? lf + 1 : end;
}

/** The `charset` of the section's Content-Type (a folded one too); null without one. */
function declaredCharset(head: Buffer): string | null {
  // Unfolded first, then one line at a time: linear whatever the folding (one pattern over folded
  // lines backtracked exponentially on a Content-Type folded over many lines without a charset).
  for (const line of head.toString('latin1').replace(/\r?\n(?=[ \t])/g, '').split('\n')) {
    if (!/^content-type:/i.test(line)) continue;
    return /;\s*charset\s*=\s*"?([A-Za-z0-9._:+-]{1,40})/i.exec(line)?.[1] ?? null;
  }
  return null;
}

const ASCII = Buffer.from('Content-Type: text/plain; charset=x\r\n');

function decoderFor(charset: string | null): TextDecoder {
  // The bytes are not UTF-8 whatever the label says.
  if (charset && !/^utf-?8$/i.test(charset)) {
    try {
      const decoder = new TextDecoder(charset);
      // Only a charset that reads ASCII as ASCII (not UTF-16, which would garble every header name).
      if (decoder.decode(ASCII) === ASCII.toString('latin1')) return decoder;
    } catch {
      // A label TextDecoder does not know: the common case below.
    }
  }
  return new TextDecoder('windows-1252');
}
